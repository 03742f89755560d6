package org.tensorcache.lease;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.LeaseTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.store.journal.LeaseTable;

/**
 * The row of one {@link DatabaseLease} in its database: the statements on it, run on the blocking
 * dispatcher, and what their failures, timeouts and refusals say, each naming the lease, its owner
 * and the database. What the lease decides from their answers stays in {@link DatabaseLease}.
 */
final class LeaseRow {
  // the lease's lines under one logger, the one operators set for it
  private static final Logger log = LoggerFactory.getLogger(DatabaseLease.class);

  private final LeaseSettings settings;
  private final LeaseTable table;
  private final Executor blocking;
  private final Duration timeout;

  LeaseRow(LeaseSettings settings, LeaseTable table, Executor blocking, Duration timeout) {
    this.settings = settings;
    this.table = table;
    this.blocking = blocking;
    this.timeout = timeout;
  }

  /** Takes the row for {@code ttl}, on the blocking dispatcher: true when this owner holds it. */
  CompletableFuture<Boolean> take(Duration ttl) {
    return CompletableFuture.supplyAsync(
        () -> call(() -> table.acquire(name(), owner(), ttl)), blocking);
  }

  /** Renews the row for {@code ttl} on the calling thread: false when it expired or was taken. */
  boolean renew(Duration ttl) throws SQLException {
    return table.renew(name(), owner(), ttl);
  }

  /** Gives the row up, on the blocking dispatcher: true when this owner held it. */
  CompletableFuture<Boolean> release() {
    return CompletableFuture.supplyAsync(
        () -> call(() -> table.release(name(), owner())), blocking);
  }

  /** Reads the lease's row once; warns when that fails. */
  void probe() {
    try {
      table.holder(name());
    } catch (SQLException e) {
      log.warn(
          "lease '{}' cannot be read at {}: {}; while this lasts, a side of the cluster that must"
              + " down unreachable members downs itself instead",
          name(),
          table.url(),
          e.getMessage());
    }
  }

  /** Logs who holds the lease this owner could not take. */
  void logHolder() {
    try {
      table
          .holder(name())
          .ifPresentOrElse(
              h ->
                  log.info(
                      "lease '{}' not taken for {}: {} holds it for another {} ms (renewed {} ms"
                          + " ago)",
                      name(),
                      owner(),
                      h.owner(),
                      h.remaining().toMillis(),
                      h.sinceRenewal().toMillis()),
              () -> log.info("lease '{}' not taken for {}: it was held", name(), owner()));
    } catch (SQLException e) {
      log.info(
          "lease '{}' not taken for {}; its holder unknown: {}", name(), owner(), e.toString());
    }
  }

  /** A future that fails with a {@link LeaseTimeoutException} after the operation timeout. */
  CompletableFuture<Boolean> bounded(String what) {
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    CompletableFuture.delayedExecutor(timeout.toMillis(), TimeUnit.MILLISECONDS)
        .execute(
            () ->
                result.completeExceptionally(
                    new LeaseTimeoutException(
                        "could not "
                            + what
                            + " lease '"
                            + name()
                            + "' for "
                            + owner()
                            + " within "
                            + timeout
                            + " (lease-operation-timeout) at "
                            + table.url())));
    return result;
  }

  /** The {@link LeaseException} of a statement of {@code what} that failed with {@code failure}. */
  LeaseException failed(String what, Throwable failure) {
    Throwable cause = failure instanceof CompletionException c ? c.getCause() : failure;
    LeaseException e =
        new LeaseException(
            "could not "
                + what
                + " lease '"
                + name()
                + "' for "
                + owner()
                + " at "
                + table.url()
                + ": "
                + cause.getMessage());
    e.initCause(cause);
    return e;
  }

  String name() {
    return settings.leaseName();
  }

  String owner() {
    return settings.ownerName();
  }

  /** A statement that may throw {@link SQLException}. */
  private interface Statement<T> {
    T run() throws SQLException;
  }

  private static <T> T call(Statement<T> statement) {
    try {
      return statement.run();
    } catch (SQLException e) {
      throw new CompletionException(e);
    }
  }
}
