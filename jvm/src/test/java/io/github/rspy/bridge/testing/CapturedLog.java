package io.github.rspy.bridge.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What a java.util.logging logger logs while this is open, kept instead of printed: for the
 * tests that make the bridge warn on purpose, which then assert the warning rather than print
 * its stack trace among the passing tests. Only this logger, only while open; the production
 * logger's level and handlers are as they were once it closes.
 */
public final class CapturedLog extends Handler implements AutoCloseable {
    private final Logger logger;
    private final boolean usedParents;
    private final List<LogRecord> records = new ArrayList<>();

    private CapturedLog(Logger logger) {
        this.logger = logger;
        this.usedParents = logger.getUseParentHandlers();
        logger.addHandler(this);
        logger.setUseParentHandlers(false);
    }

    /** Captures what {@code name} (and the loggers under it that pass records up) logs. */
    public static CapturedLog of(String name) {
        return new CapturedLog(Logger.getLogger(name));
    }

    @Override
    public synchronized void publish(LogRecord record) {
        records.add(record);
    }

    /** Each record's level and message, with its exception's if it has one: "WARNING: message (exception)". */
    public synchronized List<String> lines() {
        List<String> lines = new ArrayList<>();
        for (LogRecord record : records) {
            Throwable thrown = record.getThrown();
            lines.add(record.getLevel() + ": " + record.getMessage() + (thrown == null ? "" : " (" + thrown + ")"));
        }
        return lines;
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setUseParentHandlers(usedParents);
    }
}
