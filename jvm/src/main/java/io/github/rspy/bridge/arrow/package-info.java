/**
 * Arrow conversion for the bridge, in one place (Python's is {@code reactive_streams.jvm._arrow}):
 * rows both ways as Arrow record batches ({@link ArrowRows}, each column's type inferred by
 * {@link InferredColumn}), rows against a schema a subscriber gave ({@link SchemaRows}), record
 * batches as elements, as IPC bytes ({@link ArrowBatches}) or through the C Data Interface
 * ({@link ArrowCData}), and the {@link RowReader} SPI for rows of other kinds.
 *
 * <p>The dependency runs one way: {@code io.github.rspy.bridge} uses this package, and nothing
 * here names anything of that one; what it needs from the bridge is handed in (the allocator, the
 * test of what crosses as a plain value). The classes that name Arrow types are used only once
 * {@link ArrowSupport}, which names none, found Arrow Java usable; {@link JavaValues} (Java's
 * dates and times as Python holds them) names none either, and the bridge's pickles use it
 * without Arrow.
 */
package io.github.rspy.bridge.arrow;
