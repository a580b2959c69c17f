package io.github.rspy.spark.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.rspy.spark.connect.wire.Elements;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.sparkproject.connect.protobuf.Any;
import org.sparkproject.connect.protobuf.ByteString;
import org.sparkproject.connect.protobuf.InvalidProtocolBufferException;
import org.sparkproject.connect.protobuf.UnsafeByteOperations;

/**
 * The messages of the wire contract (docs/connect-wire.md, "Messages"): a {@code Call} from the
 * client, and the {@code Status} and {@code Elements} replies, each in a protobuf {@code Any}
 * with our type URL. {@code Call} and {@code Elements} are defined in
 * {@code spark/src/main/proto/rspy_connect.proto} (classes generated against Spark's shaded
 * protobuf); a Call's header and a Status are JSON objects, which Jackson reads and writes.
 */
final class Wire {
    static final String CALL = "type.googleapis.com/io.github.rspy.connect.Call";
    static final String STATUS = "type.googleapis.com/io.github.rspy.connect.Status";
    static final String ELEMENTS = "type.googleapis.com/io.github.rspy.connect.Elements";
    private static final ObjectMapper JSON = new ObjectMapper();

    private Wire() {}

    /** A decoded Call: its JSON header (with at least {@code op}) and its optional body. */
    record Call(JsonNode header, byte[] body) {
        String op() {
            return header.path("op").asText();
        }

        /** A required string field; a missing one is the client's bug, reported as an error. */
        String text(String field) {
            JsonNode value = header.get(field);
            if (value == null || !value.isTextual()) {
                throw new IllegalArgumentException("the " + op() + " call needs a string '" + field + "', got "
                        + value);
            }
            return value.asText();
        }

        /** An optional string field: null when absent or JSON null. */
        String optionalText(String field) {
            JsonNode value = header.get(field);
            return value == null || value.isNull() ? null : value.asText();
        }

        long integer(String field, long absent) {
            JsonNode value = header.get(field);
            if (value == null || value.isNull()) {
                return absent;
            }
            if (!value.canConvertToLong()) {
                throw new IllegalArgumentException("the " + op() + " call needs an integer '" + field + "', got "
                        + value);
            }
            return value.asLong();
        }
    }

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
        io.github.rspy.spark.connect.wire.Call call;
        try {
            call = io.github.rspy.spark.connect.wire.Call.parseFrom(any.getValue());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("an undecodable rspy Call: " + e.getMessage(), e);
        }
        String header = call.getHeader().isEmpty() ? null : call.getHeader();
        byte[] body = call.getBody().toByteArray();
        if (header == null) {
            throw new IllegalArgumentException("an rspy Call without a header");
        }
        JsonNode json;
        try {
            json = JSON.readTree(header);
        } catch (IOException e) {
            throw new IllegalArgumentException("an rspy Call whose header is not JSON: " + e.getMessage(), e);
        }
        if (json == null || !json.isObject() || !json.path("op").isTextual()) {
            throw new IllegalArgumentException("an rspy Call whose header has no \"op\": " + header);
        }
        return new Call(json, body);
    }

    static Any status(Map<String, ?> fields) {
        try {
            return Any.newBuilder().setTypeUrl(STATUS).setValue(ByteString.copyFrom(JSON.writeValueAsBytes(fields)))
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An Elements reply of {@code stream} (null: a call of one stream) holding {@code encoded}. */
    static Any elements(String stream, byte[] encoded) {
        Elements elements = Elements.newBuilder()
                .setStream(stream == null ? "" : stream)
                .setData(UnsafeByteOperations.unsafeWrap(encoded)) // the caller does not touch it again
                .build();
        return Any.newBuilder().setTypeUrl(ELEMENTS).setValue(elements.toByteString()).build();
    }

    /** {@code {"event": event}} plus pairs of further keys and values. */
    static Map<String, Object> event(String event, Object... more) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("event", event);
        for (int i = 0; i + 1 < more.length; i += 2) {
            fields.put((String) more[i], more[i + 1]);
        }
        return fields;
    }

    static Map<String, Object> error(Throwable error) {
        StringWriter stack = new StringWriter();
        error.printStackTrace(new PrintWriter(stack));
        String message = error.getMessage() == null ? "" : error.getMessage();
        return event("error", "class", error.getClass().getName(), "message", message, "stack", stack.toString());
    }

    static Map<String, Object> unknown(String stream) {
        return event("unknown", "stream", stream);
    }
}
