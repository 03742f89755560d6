package org.tensorcache.lease;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.apache.pekko.dispatch.MessageDispatcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.store.journal.JournalSettings;
import org.tensorcache.store.journal.LeaseTable;

/**
 * A Pekko Coordination lease held as a row of the journal's PostgreSQL database ({@link
 * LeaseTable}): what the Split Brain Resolver's {@code lease-majority} takes before it downs the
 * other side, so that of two sides only one, the one that reaches the database first, survives.
 *
 * <p>Who holds the lease and until when is decided by the database's clock alone. The holder renews
 * it every {@code heartbeat-interval}; it counts the lease as its own only from the start of its
 * last successful renewal, by its monotonic clock, which never runs ahead of the row's expiry.
 *
 * <ul>
 *   <li>{@link #checkLease()} is true while the last renewal started at most two heartbeat
 *       intervals ago (one renewal may fail): then the row holds for at least {@code
 *       heartbeat-timeout} minus that, longer than the other side of a partition needs to make its
 *       own attempt, which fails.
 *   <li>The lease is lost, and the callback given to {@link #acquire(Consumer)} called, when a
 *       renewal finds the row expired or taken, or when renewals have failed for {@code
 *       heartbeat-timeout}.
 * </ul>
 *
 * <p>Configured under the path given to {@code LeaseProvider} (see {@code tensorcache.lease} in
 * this module's reference.conf); the database is that of {@code pekko.persistence.journal.plugin}.
 */
public final class DatabaseLease extends Lease {
  private static final Logger log = LoggerFactory.getLogger(DatabaseLease.class);
  private static final String BLOCKING = "pekko.actor.default-blocking-io-dispatcher";
  private static final Consumer<Optional<Throwable>> NO_CALLBACK = cause -> {};

  private final LeaseSettings settings;
  private final LeaseRow row;
  private final ExtendedActorSystem system;
  private final MessageDispatcher blocking;
  private final Duration ttl;
  private final Duration interval;
  private final Duration timeout;

  // guarded by this
  private boolean held;
  private long renewedAt; // System.nanoTime() at the start of the last successful take or renewal
  private long epoch; // changes with every take, loss and release: older answers are ignored
  private boolean renewing;
  private Consumer<Optional<Throwable>> onLoss = NO_CALLBACK;
  private Cancellable heartbeat;

  /** The lease of {@code settings}, in the journal database of {@code system}'s configuration. */
  public DatabaseLease(LeaseSettings settings, ExtendedActorSystem system) {
    this.settings = settings;
    this.system = system;
    this.ttl = settings.timeoutSettings().getHeartbeatTimeout();
    this.interval = settings.timeoutSettings().getHeartbeatInterval();
    this.timeout = settings.timeoutSettings().getOperationTimeout();
    this.blocking = system.dispatchers().lookup(BLOCKING);
    LeaseTable table =
        LeaseTable.of(JournalSettings.journalDatabase(system.settings().config()), timeout);
    this.row = new LeaseRow(settings, table, blocking, timeout);
    // the first statement of a JVM is slow (classes, a first connection): make it now rather than
    // in a decision, and say now, not then, when the database cannot be reached
    CompletableFuture.runAsync(row::probe, blocking);
  }

  @Override
  public LeaseSettings getSettings() {
    return settings;
  }

  @Override
  public CompletionStage<Boolean> acquire() {
    return acquire(NO_CALLBACK);
  }

  @Override
  public CompletionStage<Boolean> acquire(Consumer<Optional<Throwable>> leaseLostCallback) {
    CompletableFuture<Boolean> result = row.bounded("take");
    long start = System.nanoTime();
    row.take(ttl)
        .whenComplete(
            (taken, failure) -> {
              if (failure != null) {
                result.completeExceptionally(row.failed("take", failure));
              } else if (taken) {
                onTaken(start, leaseLostCallback, result);
              } else {
                row.logHolder();
                result.complete(false);
              }
            });
    return result;
  }

  @Override
  public CompletionStage<Boolean> release() {
    synchronized (this) {
      stopHolding();
    }
    CompletableFuture<Boolean> result = row.bounded("release");
    row.release()
        .whenComplete(
            (released, failure) -> {
              if (failure != null) {
                result.completeExceptionally(row.failed("release", failure));
              } else {
                if (released) {
                  log.info("released lease '{}' of {}", name(), owner());
                }
                // also when it was not this owner's (any more): either way this owner holds
                // nothing now, and the resolver would otherwise ask again every second
                result.complete(true);
              }
            });
    return result;
  }

  @Override
  public synchronized boolean checkLease() {
    return held && System.nanoTime() - renewedAt < 2 * interval.toNanos();
  }

  /** Marks the lease held from {@code start} on, unless the caller has given up waiting. */
  private void onTaken(
      long start, Consumer<Optional<Throwable>> callback, CompletableFuture<Boolean> result) {
    synchronized (this) {
      held = true;
      renewedAt = start;
      epoch++;
      onLoss = callback;
      if (heartbeat == null) {
        heartbeat =
            system.scheduler().scheduleWithFixedDelay(interval, interval, this::renew, blocking);
      }
      if (result.complete(true)) {
        log.info("took lease '{}' for {} (expires {} after each renewal)", name(), owner(), ttl);
        return;
      }
      stopHolding(); // the attempt timed out and was answered as failed: do not keep the row
    }
    row.release();
  }

  /** One heartbeat: renews the row, or declares the lease lost. */
  private void renew() {
    long start = System.nanoTime();
    long at;
    synchronized (this) {
      if (!held || renewing) {
        if (held && start - renewedAt >= ttl.toNanos()) {
          lose(Optional.of(new LeaseException("lease not renewed within " + ttl)));
        }
        return;
      }
      renewing = true;
      at = epoch;
    }
    boolean renewed = false;
    SQLException failure = null;
    try {
      renewed = row.renew(ttl);
    } catch (SQLException e) {
      failure = e;
    }
    synchronized (this) {
      renewing = false;
      if (!held || epoch != at) {
        return; // released or lost meanwhile
      }
      if (renewed) {
        renewedAt = start;
      } else if (failure == null) {
        lose(Optional.empty()); // expired or taken: another owner may hold it now
      } else if (System.nanoTime() - renewedAt >= ttl.toNanos()) {
        lose(Optional.of(row.failed("renew", failure)));
      } else {
        log.warn("renewal of lease '{}' of {} failed: {}", name(), owner(), failure.toString());
      }
    }
  }

  /** Ends holding and calls the loss callback on another thread, never under this lock. */
  private void lose(Optional<Throwable> cause) {
    Consumer<Optional<Throwable>> callback = onLoss;
    stopHolding();
    log.warn(
        "lost lease '{}' of {}: {}",
        name(),
        owner(),
        cause.map(Throwable::getMessage).orElse("its row expired or another owner took it"));
    CompletableFuture.runAsync(() -> callback.accept(cause), blocking);
  }

  private void stopHolding() {
    held = false;
    epoch++;
    onLoss = NO_CALLBACK;
    if (heartbeat != null) {
      heartbeat.cancel();
      heartbeat = null;
    }
  }

  private String name() {
    return row.name();
  }

  private String owner() {
    return row.owner();
  }
}
