package io.github.rspy.spark

import org.reactivestreams.Publisher

/** Scala-side streams for PySpark (see the README's "Scala ⇄ PySpark"). */
object ScalaStreams {
  def placeholder(): Publisher[AnyRef] = null
}
