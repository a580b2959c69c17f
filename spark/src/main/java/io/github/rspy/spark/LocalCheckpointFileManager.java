package io.github.rspy.spark;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathFilter;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager;
import org.apache.spark.sql.execution.streaming.checkpointing.FileContextBasedCheckpointFileManager;
import org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager;

/**
 * A streaming checkpoint manager that writes the files of a local ({@code file:}) checkpoint
 * with {@code java.nio}, and leaves every other file system to Spark's own manager.
 *
 * <p>Why: without Hadoop's native library (PySpark ships none), each checkpoint file Spark
 * writes locally costs about ten child processes ({@code chmod} when a file is created, {@code
 * readlink} around each rename, for the file and its {@code .crc}), some 4 ms each: about 80
 * ms of every micro-batch, whatever its size. Enabled with {@code
 * spark.sql.streaming.checkpointFileManagerClass} (Python: {@code rss.configure(builder,
 * fast_local_checkpoints=True)}).
 *
 * <p>What it keeps: a file is written to a temporary sibling and appears whole, atomically
 * (a rename, or, when it must not overwrite, a hard link, which fails if the file exists: the
 * error Spark reports as two queries using one checkpoint). It writes no {@code .crc} files
 * (reading verifies the ones Spark's manager wrote) and, as Spark's manager does locally, does
 * not sync to disk. Reading, listing and deleting go through Hadoop's local file system.
 */
public final class LocalCheckpointFileManager implements CheckpointFileManager {
    private final CheckpointFileManager hadoop; // everything but local writes
    private final boolean local;

    public LocalCheckpointFileManager(Path path, Configuration conf) throws IOException {
        local = "file".equals(path.getFileSystem(conf).getUri().getScheme());
        hadoop = local ? new FileSystemBasedCheckpointFileManager(path, conf) : sparkDefault(path, conf);
    }

    /** What Spark chooses itself: FileContext where the file system has one. */
    private static CheckpointFileManager sparkDefault(Path path, Configuration conf) {
        try {
            return new FileContextBasedCheckpointFileManager(path, conf);
        } catch (Exception e) { // Scala throws the checked UnsupportedFileSystemException undeclared
            if (e instanceof UnsupportedFileSystemException) {
                return new FileSystemBasedCheckpointFileManager(path, conf);
            }
            throw e instanceof RuntimeException ? (RuntimeException) e : new IllegalStateException(e);
        }
    }

    @Override
    public CancellableFSDataOutputStream createAtomic(Path path, boolean overwriteIfPossible) {
        if (!local) {
            return hadoop.createAtomic(path, overwriteIfPossible);
        }
        java.nio.file.Path target = Paths.get(path.toUri().getPath());
        java.nio.file.Path temp = target.resolveSibling("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            Files.createDirectories(target.getParent());
            OutputStream out = Files.newOutputStream(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            return new AtomicFile(new BufferedOutputStream(out, 64 * 1024), temp, target, overwriteIfPossible);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the checkpoint file " + path, e);
        }
    }

    @Override
    public FSDataInputStream open(Path path) {
        return hadoop.open(path);
    }

    @Override
    public FileStatus[] list(Path path, PathFilter filter) {
        return hadoop.list(path, filter);
    }

    @Override
    public void mkdirs(Path path) {
        hadoop.mkdirs(path);
    }

    @Override
    public boolean exists(Path path) {
        return hadoop.exists(path);
    }

    @Override
    public void delete(Path path) {
        hadoop.delete(path);
    }

    @Override
    public boolean isLocal() {
        return hadoop.isLocal();
    }

    @Override
    public Path createCheckpointDirectory() {
        return hadoop.createCheckpointDirectory();
    }

    @Override
    public void close() {
        hadoop.close();
    }

    /** A temporary file that becomes {@code target} when closed, or disappears when cancelled. */
    static final class AtomicFile extends CancellableFSDataOutputStream {
        private final java.nio.file.Path temp;
        private final java.nio.file.Path target;
        private final boolean overwrite;
        private boolean ended;

        AtomicFile(OutputStream out, java.nio.file.Path temp, java.nio.file.Path target, boolean overwrite) {
            super(out);
            this.temp = temp;
            this.target = target;
            this.overwrite = overwrite;
        }

        @Override
        public synchronized void close() throws IOException {
            if (ended) {
                return;
            }
            ended = true;
            try {
                super.close();
                if (overwrite) {
                    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } else {
                    linkOnce();
                }
            } finally {
                Files.deleteIfExists(temp);
            }
        }

        /** {@code target} as a new name of the written file, failing if it exists. */
        private void linkOnce() throws IOException {
            try {
                Files.createLink(target, temp); // atomic: link(2) fails if the name exists
            } catch (java.nio.file.FileAlreadyExistsException e) {
                throw new FileAlreadyExistsException("the checkpoint file " + target + " already exists");
            } catch (UnsupportedOperationException | IOException e) { // no hard links here
                if (Files.exists(target)) {
                    throw new FileAlreadyExistsException("the checkpoint file " + target + " already exists");
                }
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
            }
        }

        @Override
        public synchronized void cancel() {
            if (ended) {
                return;
            }
            ended = true;
            try {
                super.close();
            } catch (IOException e) {
                // the file is deleted next anyway
            }
            try {
                Files.deleteIfExists(temp);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete " + temp, e);
            }
        }
    }
}
