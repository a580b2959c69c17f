package io.github.rspy.spark.testing;

import io.github.rspy.spark.LocalCheckpointFileManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathFilter;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager;

/**
 * For the driver-restart test: a streaming checkpoint manager that never writes Spark's commit
 * log entry {@code commits/N}, N given by the environment variable {@code
 * RSPY_TEST_BLOCK_COMMIT}. It creates the file named by {@code RSPY_TEST_BLOCKED_MARKER} and
 * waits there for ever, so that the test can kill the driver after a micro-batch was delivered
 * and before Spark recorded its commit. Everything else goes to {@link
 * LocalCheckpointFileManager}.
 */
public final class BlockingCommitFileManager implements CheckpointFileManager {
    private final CheckpointFileManager files;

    public BlockingCommitFileManager(Path path, Configuration conf) throws IOException {
        files = new LocalCheckpointFileManager(path, conf);
    }

    @Override
    public CheckpointFileManager.CancellableFSDataOutputStream createAtomic(Path path, boolean overwriteIfPossible) {
        String blocked = System.getenv("RSPY_TEST_BLOCK_COMMIT");
        if (blocked != null && path.getName().equals(blocked) && path.getParent().getName().equals("commits")) {
            try {
                Files.writeString(Paths.get(System.getenv("RSPY_TEST_BLOCKED_MARKER")), path.toString());
                Thread.sleep(Long.MAX_VALUE); // until the test kills this driver
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException("the blocked commit " + path + " was interrupted", e);
            }
        }
        return files.createAtomic(path, overwriteIfPossible);
    }

    @Override
    public FSDataInputStream open(Path path) {
        return files.open(path);
    }

    @Override
    public FileStatus[] list(Path path, PathFilter filter) {
        return files.list(path, filter);
    }

    @Override
    public void mkdirs(Path path) {
        files.mkdirs(path);
    }

    @Override
    public boolean exists(Path path) {
        return files.exists(path);
    }

    @Override
    public void delete(Path path) {
        files.delete(path);
    }

    @Override
    public boolean isLocal() {
        return files.isLocal();
    }

    @Override
    public Path createCheckpointDirectory() {
        return files.createCheckpointDirectory();
    }

    @Override
    public void close() {
        files.close();
    }
}
