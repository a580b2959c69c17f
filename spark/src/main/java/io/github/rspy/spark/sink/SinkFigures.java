package io.github.rspy.spark.sink;

import com.sun.security.auth.module.UnixSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The figures of a Python {@code register_sink} sink's streaming query, as its commits wrote
 * them on this host (Python's {@code reactive_streams.spark.partitioned._sink_figures}): read
 * for the Connect plugin's {@code sink_progress} op, which a client's {@code
 * rss.sink_progress(query)} sends. The commit runs in a Python worker this JVM starts, with its
 * environment, so both find the folder by the same rule: Python's {@code tempfile.gettempdir()}
 * ({@code TMPDIR}, {@code TEMP}, {@code TMP}, else {@code /tmp}), then {@code
 * reactive-streams-sinks-<uid>}. Internal to the connectors.
 */
public final class SinkFigures {
    private SinkFigures() {}

    /**
     * The JSON text of query {@code queryId}'s figures, or {@code null} if this host has none.
     *
     * @throws IllegalArgumentException {@code queryId} is not a UUID in its canonical form
     * @throws IllegalStateException the folder belongs to another user
     */
    public static String read(String queryId) {
        if (!canonical(queryId)) { // no path of the caller's making
            throw new IllegalArgumentException("a query id is a UUID in its canonical form, got '" + queryId + "'");
        }
        long uid = new UnixSystem().getUid();
        Path folder = temporaryFolder().resolve("reactive-streams-sinks-" + uid);
        try {
            Object owner = Files.getAttribute(folder, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (((Number) owner).longValue() != uid) {
                throw new IllegalStateException(folder + " belongs to another user: its figures are not read");
            }
            return Files.readString(folder.resolve(queryId + ".json"), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null; // no commit of the query's has written here (yet)
        } catch (IOException e) {
            throw new UncheckedIOException("reading the figures of query " + queryId + " in " + folder, e);
        }
    }

    private static boolean canonical(String queryId) {
        try {
            return queryId != null && UUID.fromString(queryId).toString().equals(queryId);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Python's {@code tempfile.gettempdir()} as a Python worker of this JVM finds it. */
    static Path temporaryFolder() {
        for (String name : new String[] {"TMPDIR", "TEMP", "TMP"}) {
            String value = System.getenv(name);
            if (value != null && !value.isEmpty()) {
                return Path.of(value).toAbsolutePath();
            }
        }
        return Path.of("/tmp");
    }
}
