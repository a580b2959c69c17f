package io.github.rspy.spark.connect;

import org.apache.spark.sql.connect.service.SessionHolder;

/**
 * The Connect session a stream belongs to (wire contract, "Scope"): every op looks streams up
 * in its caller's scope only, so one client can never touch another's streams. The server
 * session id tells a session apart from a later one that reuses the client's session id.
 */
record Scope(String userId, String sessionId, String serverSessionId) {
    static Scope of(SessionHolder holder) {
        return new Scope(holder.userId(), holder.sessionId(), holder.serverSessionId());
    }

    /** userId + NUL + sessionId + NUL + serverSessionId, as the contract spells the key. */
    String key() {
        return userId + "\u0000" + sessionId + "\u0000" + serverSessionId;
    }

    /** Whether this is (any server session of) the client session {@code userId}/{@code sessionId}. */
    boolean isSession(String user, String session) {
        return userId.equals(user) && sessionId.equals(session);
    }
}
