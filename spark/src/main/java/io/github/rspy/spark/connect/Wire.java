package io.github.rspy.spark.connect;

import io.github.rspy.spark.connect.wire.Call;
import io.github.rspy.spark.connect.wire.Elements;
import io.github.rspy.spark.connect.wire.Status;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Locale;
import org.sparkproject.connect.protobuf.Any;
import org.sparkproject.connect.protobuf.InvalidProtocolBufferException;
import org.sparkproject.connect.protobuf.UnsafeByteOperations;

/**
 * The messages of the wire contract (docs/connect-wire.md), each in a protobuf {@code Any} with
 * our type URL: a {@code Call} from the client, and the {@code Status} and {@code Elements}
 * replies. All three are defined in {@code spark/src/main/proto/rspy_connect.proto}; their classes
 * are generated against Spark's shaded protobuf.
 */
final class Wire {
    static final String CALL = "type.googleapis.com/io.github.rspy.connect.Call";
    static final String STATUS = "type.googleapis.com/io.github.rspy.connect.Status";
    static final String ELEMENTS = "type.googleapis.com/io.github.rspy.connect.Elements";

    private Wire() {}

    static boolean isCall(Any any) {
        return CALL.equals(any.getTypeUrl());
    }

    /**
     * The Call in {@code any}; throws {@code IllegalArgumentException} naming what is wrong with
     * an undecodable one, which its caller answers as an {@code error} (a quick op's Status, or
     * a command's failure).
     */
    static Call decode(Any any) {
        if (!isCall(any)) {
            throw new IllegalArgumentException("not an rspy Call: " + any.getTypeUrl());
        }
        Call call;
        try {
            call = Call.parseFrom(any.getValue());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("an undecodable rspy Call: " + e.getMessage(), e);
        }
        if (call.getOpCase() == Call.OpCase.OP_NOT_SET) { // none, or one this server does not know
            throw new IllegalArgumentException("an rspy Call without an op this server knows (fields "
                    + call.getUnknownFields().asMap().keySet() + " unknown)");
        }
        return call;
    }

    /** The op's name, as in the .proto ({@code register_publisher}). */
    static String op(Call call) {
        return call.getOpCase().name().toLowerCase(Locale.ROOT);
    }

    /** The call's stream; a missing one is the client's bug, reported as an error. */
    static String stream(Call call) {
        if (call.getStream().isEmpty()) {
            throw new IllegalArgumentException("the " + op(call) + " call needs a stream");
        }
        return call.getStream();
    }

    /** A string field the op needs: an empty one is reported as an error naming it. */
    static String required(Call call, String field, String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException("the " + op(call) + " call needs '" + field + "'");
        }
        return value;
    }

    static Any status(Status status) {
        return Any.newBuilder().setTypeUrl(STATUS).setValue(status.toByteString()).build();
    }

    /** An Elements reply of {@code stream} (null: a call of one stream) holding {@code encoded}. */
    static Any elements(String stream, byte[] encoded) {
        Elements elements = Elements.newBuilder()
                .setStream(stream == null ? "" : stream)
                .setData(UnsafeByteOperations.unsafeWrap(encoded)) // the caller does not touch it again
                .build();
        return Any.newBuilder().setTypeUrl(ELEMENTS).setValue(elements.toByteString()).build();
    }

    static Status ok() {
        return Status.newBuilder().setOk(Status.Ok.getDefaultInstance()).build();
    }

    static Status opened() {
        return Status.newBuilder().setOpened(Status.Opened.getDefaultInstance()).build();
    }

    static Status complete() {
        return Status.newBuilder().setComplete(Status.Complete.getDefaultInstance()).build();
    }

    static Status closed() {
        return Status.newBuilder().setClosed(Status.Closed.getDefaultInstance()).build();
    }

    static Status heartbeat() {
        return Status.newBuilder().setHeartbeat(Status.Heartbeat.getDefaultInstance()).build();
    }

    /** A stream's {@code cancelled}, saying why (empty if nobody said). */
    static Status cancelled(String reason) {
        return Status.newBuilder().setCancelled(Status.Cancelled.newBuilder().setReason(reason == null ? "" : reason))
                .build();
    }

    /** A push's {@code cancelled}: the subscription {@code sub} is over. */
    static Status cancelledSubscription(long sub) {
        return Status.newBuilder().setCancelled(Status.Cancelled.newBuilder().setSub(sub)).build();
    }

    static Status error(Throwable error) {
        StringWriter stack = new StringWriter();
        error.printStackTrace(new PrintWriter(stack));
        return Status.newBuilder().setError(Status.Failed.newBuilder()
                .setJavaClass(error.getClass().getName())
                .setMessage(error.getMessage() == null ? "" : error.getMessage())
                .setStack(stack.toString())).build();
    }

    static Status unknown(String stream) {
        return Status.newBuilder().setStream(stream).setUnknown(Status.Unknown.getDefaultInstance()).build();
    }
}
