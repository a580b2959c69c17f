package io.github.rspy.spark.connect;

import io.github.rspy.spark.connect.wire.Status;
import org.apache.spark.connect.proto.ExecutePlanResponse;
import org.apache.spark.sql.connect.execution.ExecuteResponseObserver;
import org.sparkproject.connect.protobuf.ByteString;

/**
 * The replies of one ExecutePlan call, sent through its response observer,
 * which fills in the session, operation and response ids. Only the call's own thread sends.
 * A send that throws means the client is gone: callers cancel what they run and return. On a
 * {@link Mux}'s call, a stream's replies name it ({@link #of}).
 */
final class ExecuteReplies {
    /** The end-of-stream marker of the Arrow IPC stream format: continuation, then length 0. */
    private static final byte[] ARROW_EOS = {-1, -1, -1, -1, 0, 0, 0, 0};

    private final ExecuteResponseObserver<ExecutePlanResponse> observer;
    private final String stream; // the stream these replies are of, on a mux call; else null

    ExecuteReplies(ExecuteResponseObserver<ExecutePlanResponse> observer) {
        this(observer, null);
    }

    private ExecuteReplies(ExecuteResponseObserver<ExecutePlanResponse> observer, String stream) {
        this.observer = observer;
        this.stream = stream;
    }

    /** The replies of {@code stream} on this (mux) call: each names it. */
    ExecuteReplies of(String stream) {
        return new ExecuteReplies(observer, stream);
    }

    void status(Status status) {
        Status sent = stream == null ? status : status.toBuilder().setStream(stream).build();
        send(ExecutePlanResponse.newBuilder().setExtension(Wire.status(sent)).build());
    }

    void elements(byte[] encoded) {
        send(ExecutePlanResponse.newBuilder().setExtension(Wire.elements(stream, encoded)).build());
    }

    /**
     * One Arrow batch as a complete IPC stream (the schema message, the batch message, the end
     * marker), so the client reads each reply on its own, as it reads Spark's own arrow_batch.
     */
    void arrowBatch(byte[] schemaMessage, byte[] batchMessage, long rows) {
        ByteString data = ByteString.copyFrom(schemaMessage).concat(ByteString.copyFrom(batchMessage))
                .concat(ByteString.copyFrom(ARROW_EOS));
        send(ExecutePlanResponse.newBuilder()
                .setArrowBatch(ExecutePlanResponse.ArrowBatch.newBuilder().setRowCount(rows).setData(data))
                .build());
    }

    private void send(ExecutePlanResponse response) {
        try {
            observer.onNext(response);
        } catch (RuntimeException e) {
            throw new ClientGone(e);
        }
    }

    /** A reply could not be sent: the call has ended (its client is gone, or it was interrupted). */
    static final class ClientGone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ClientGone(RuntimeException cause) {
            super(cause.toString(), cause);
        }
    }
}
