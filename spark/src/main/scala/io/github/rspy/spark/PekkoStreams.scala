package io.github.rspy.spark

import org.apache.pekko.actor.ActorSystem
import org.apache.pekko.stream.Materializer
import org.apache.pekko.stream.scaladsl.{Sink, Source}
import org.reactivestreams.Publisher

/**
 * Pekko Streams sources handed to PySpark as publishers. A class of its own, apart from
 * `ScalaStreams`: it needs Pekko (pekko-actor, pekko-stream and their dependencies) on the
 * driver's classpath, which `ScalaStreams` does not.
 */
object PekkoStreams {

  /** 1 to `count` from a Pekko Streams Source, run as a publisher (Pekko keeps the rules). */
  def range(count: Int, system: ActorSystem): Publisher[Integer] =
    Source(1 to count).map(Integer.valueOf).runWith(Sink.asPublisher[Integer](fanout = false))(Materializer(system))
}
