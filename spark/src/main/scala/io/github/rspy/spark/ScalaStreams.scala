package io.github.rspy.spark

import java.util.concurrent.{CompletableFuture, ExecutorService, Executors}
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.spark.sql.{Dataset, Row, SparkSession}
import org.apache.spark.sql.types._
import org.reactivestreams.{Publisher, Subscriber, Subscription}

import io.github.rspy.bridge.Demand

/**
 * Scala ⇄ PySpark: publishers that Scala code hands to PySpark (which subscribes through
 * `spark._jvm` and the bridge), and a Scala subscriber of a Python publisher.
 *
 * Its signatures name only Spark, Scala and org.reactivestreams types, so it loads with just the
 * jars `reactive_streams.spark.configure` adds; code that needs an optional library (Pekko) lives
 * in a class of its own (`PekkoStreams`).
 */
object ScalaStreams {

  /** A Dataset's rows, each subscriber its own pass; partitions are computed as they are
    * consumed (`toLocalIterator`), so demand paces the Spark jobs. */
  def datasetRows(dataset: Dataset[Row]): Publisher[Row] =
    new IteratorPublisher[Row](() => dataset.toLocalIterator().asScala)

  /** A subscriber that appends what it receives to `table`, `chunkSize` elements at a time. */
  def tableWriter(spark: SparkSession, table: String, schemaDdl: String, chunkSize: Int): TableWriter =
    new TableWriter(spark, table, StructType.fromDDL(schemaDdl), chunkSize)
}

/**
 * A synchronous publisher of an iterator's elements (a fresh iterator per subscriber). Its
 * subscription is a demand counter: only the `request` that lifts demand from zero runs the
 * emit loop, so `request` inside `onNext` does not recurse (§3.3).
 */
final class IteratorPublisher[T](open: () => Iterator[T]) extends Publisher[T] {
  override def subscribe(subscriber: Subscriber[_ >: T]): Unit = {
    if (subscriber == null) throw new NullPointerException("§1.9: subscribe(null)")
    val subscription = new IteratorSubscription[T](subscriber, open)
    try subscriber.onSubscribe(subscription)
    catch { case _: RuntimeException => subscription.cancel() } // §2.13
  }
}

private final class IteratorSubscription[T](subscriber: Subscriber[_ >: T], open: () => Iterator[T])
    extends Subscription {
  private val requested = new AtomicLong()
  @volatile private var target: Subscriber[_ >: T] = subscriber
  @volatile private var cancelled = false
  @volatile private var invalid: IllegalArgumentException = _
  private var iterator: Iterator[T] = _ // touched only by the emit loop

  override def request(n: Long): Unit = {
    if (cancelled) return // §3.6
    if (n <= 0 && invalid == null) invalid = Demand.illegalRequest(n) // §3.9, signalled by the loop
    // Only the request that lifts demand from 0 runs the loop; a bad one lifts it by 1 to get there.
    if (Demand.add(requested, if (n <= 0) 1 else n) == 0) emit() // §3.8, §3.17
  }

  override def cancel(): Unit = {
    cancelled = true // §3.5, §3.7
    target = null // §3.13
  }

  private def emit(): Unit = {
    var emitted = 0L
    var demand = requested.get()
    while (true) {
      val s = target
      if (cancelled || s == null) return
      if (invalid != null) {
        end(s, invalid)
        return
      }
      try {
        if (iterator == null) iterator = open()
        while (emitted != demand && !cancelled && invalid == null) {
          if (!iterator.hasNext) {
            end(s, null) // §1.5
            return
          }
          s.onNext(iterator.next()) // §1.1
          emitted += 1
        }
      } catch {
        case e: Throwable if !cancelled => end(s, e); return // §1.4
      }
      if (!cancelled && invalid == null) {
        demand = requested.get()
        if (demand == emitted) { // all of it emitted: take it off, and stop unless more came meanwhile
          demand = Demand.produced(requested, emitted) // unbounded demand is never used up (§3.17)
          if (demand == 0) return
          emitted = 0
        }
      }
    }
  }

  private def end(s: Subscriber[_ >: T], error: Throwable): Unit = {
    cancelled = true
    target = null
    if (error == null) s.onComplete() else s.onError(error)
  }
}

/**
 * Appends a publisher's elements to a Spark table, `chunkSize` at a time: it requests a chunk,
 * writes it when it is full (or the stream ends) on its own thread, and only then requests the
 * next, so a slow table slows the publisher instead of growing a buffer. Elements are arrays or
 * lists (positional), maps (by column name), the value itself for a one-column schema, or Arrow
 * batches (`VectorSchemaRoot`, what a `pyarrow.RecordBatch` from Python becomes: its columns by
 * name), each written at once and closed; `chunkSize` then counts batches.
 * `completion()` completes with the number of rows written, or with the stream's error.
 */
final class TableWriter(spark: SparkSession, table: String, schema: StructType, chunkSize: Int)
    extends Subscriber[AnyRef] {
  require(chunkSize > 0, s"chunkSize must be > 0, got $chunkSize")
  private val writer: ExecutorService = Executors.newSingleThreadExecutor { r =>
    val thread = new Thread(r, s"table-writer-$table")
    thread.setDaemon(true)
    thread
  }
  private val result = new CompletableFuture[java.lang.Long]()
  private val buffer = new java.util.ArrayList[Row](chunkSize)
  @volatile private var subscription: Subscription = _
  @volatile private var written = 0L
  private var received = 0L // elements since the last flush; onNext's only (§1.3: serial)

  def completion(): CompletableFuture[java.lang.Long] = result

  override def onSubscribe(s: Subscription): Unit = {
    if (s == null) throw new NullPointerException("§2.13: onSubscribe(null)")
    if (subscription != null) { s.cancel(); return } // §2.5
    subscription = s
    s.request(chunkSize.toLong)
  }

  override def onNext(element: AnyRef): Unit = {
    if (element == null) throw new NullPointerException("§2.13: onNext(null)")
    received += 1
    try {
      element match {
        case root: VectorSchemaRoot => // a whole batch (a pyarrow.RecordBatch from Python): written at once
          try rowsOf(root).foreach(buffer.add)
          finally root.close() // its subscriber owns it
          flush(requestMore = true)
        case _ =>
          buffer.add(toRow(element))
          if (buffer.size == chunkSize) flush(requestMore = true)
      }
    } catch {
      case e: IllegalArgumentException =>
        subscription.cancel()
        writer.execute(() => result.completeExceptionally(e))
    }
  }

  override def onError(error: Throwable): Unit = {
    if (error == null) throw new NullPointerException("§2.13: onError(null)")
    writer.execute(() => result.completeExceptionally(error))
    writer.shutdown()
  }

  override def onComplete(): Unit = {
    flush(requestMore = false)
    writer.execute(() => result.complete(written))
    writer.shutdown()
  }

  private def flush(requestMore: Boolean): Unit = {
    val rows = new java.util.ArrayList[Row](buffer)
    buffer.clear()
    val consumed = received // requested again once written: at most chunkSize elements ahead
    received = 0
    writer.execute { () =>
      if (!result.isDone) {
        try {
          if (!rows.isEmpty) {
            spark.createDataFrame(rows, schema).write.mode("append").saveAsTable(table)
            written += rows.size
          }
          if (requestMore) subscription.request(consumed)
        } catch {
          case e: Exception =>
            subscription.cancel()
            result.completeExceptionally(e)
        }
      }
    }
  }

  /** A batch's rows, by column name (its other columns ignored), as `toRow` converts values. */
  private def rowsOf(root: VectorSchemaRoot): Seq[Row] = {
    val vectors = schema.fields.toSeq.map { f =>
      val vector = root.getVector(f.name)
      if (vector == null)
        throw new IllegalArgumentException(s"a batch without the column ${f.name}: ${root.getSchema}")
      (vector, f.dataType)
    }
    (0 until root.getRowCount).map { r =>
      Row.fromSeq(vectors.map { case (vector, dataType) =>
        vector.getObject(r) match {
          case text: org.apache.arrow.vector.util.Text => convert(text.toString, dataType)
          case value => convert(value, dataType)
        }
      })
    }
  }

  private def toRow(element: AnyRef): Row = {
    val fields = schema.fields
    val values: Seq[Any] = element match {
      case array: Array[AnyRef] => array.toSeq
      case list: java.util.List[_] => list.asScala.toSeq
      case map: java.util.Map[_, _] => fields.toSeq.map(f => map.get(f.name))
      case value if fields.length == 1 => Seq(value)
      case other =>
        throw new IllegalArgumentException(s"$other is not a row of ${schema.simpleString}")
    }
    if (values.length != fields.length)
      throw new IllegalArgumentException(s"${values.length} values for ${fields.length} columns")
    Row.fromSeq(values.zip(fields).map { case (value, field) => convert(value, field.dataType) })
  }

  private def convert(value: Any, dataType: DataType): Any = (value, dataType) match {
    case (null, _) => null
    case (n: Number, LongType) => n.longValue
    case (n: Number, IntegerType) => n.intValue
    case (n: Number, ShortType) => n.shortValue
    case (n: Number, DoubleType) => n.doubleValue
    case (n: Number, FloatType) => n.floatValue
    case (v, StringType) => v.toString
    case (v, _) => v
  }
}
