package org.tensorcache.store.objects;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;

/**
 * Tries a request again while it fails with a transient error, waiting longer each time, for a
 * bounded time. The SDK's own retries are off, so that this window is the only one.
 */
final class Retry {
  private static final Logger log = LoggerFactory.getLogger(Retry.class);

  /** A request: returns its result or throws what failed. */
  @FunctionalInterface
  interface Call<T> {
    T run() throws IOException;
  }

  private final String endpoint;
  private final Duration window;
  private final Duration first;
  private final Duration max;
  private final AtomicLong failedAttempts = new AtomicLong();
  private volatile Unreachable unreachable;

  Retry(String endpoint, Duration window, Duration first, Duration max) {
    this.endpoint = endpoint;
    this.window = window;
    this.first = first;
    this.max = max;
  }

  /** Failed tries so far that were tried again or ran out of time. */
  long failedAttempts() {
    return failedAttempts.get();
  }

  /**
   * Why the store counts as unreachable, or null when it is not: the last try of any request failed
   * with a transient error and none has succeeded since.
   */
  String unreachable() {
    Unreachable u = unreachable;
    if (u == null) {
      return null;
    }
    return String.format(
        "%s unreachable for %d s: %s",
        endpoint, (System.nanoTime() - u.sinceNanos()) / 1_000_000_000L, u.cause());
  }

  /** A try succeeded: the store is reachable. */
  void reached() {
    unreachable = null;
  }

  /** A try failed with a transient error: the store counts as unreachable from now (or before). */
  void missed(Throwable cause) {
    Unreachable u = unreachable;
    unreachable = new Unreachable(u == null ? System.nanoTime() : u.sinceNanos(), cause.toString());
  }

  private record Unreachable(long sinceNanos, String cause) {}

  /**
   * The result of {@code call}, tried again after transient errors until the window is over; a
   * permanent error becomes an {@link ObjectStorageException} at once, the window's end an {@link
   * ObjectStorageUnavailableException}. {@code what} names the request and its object.
   */
  <T> T call(String what, Call<T> call) throws IOException {
    long started = System.nanoTime();
    long deadline = started + window.toNanos();
    long wait = first.toNanos();
    for (int attempt = 1; ; attempt++) {
      try {
        T result = call.run();
        reached();
        return result;
      } catch (IOException | RuntimeException e) {
        if (!isTransient(e)) {
          reached(); // a reply, even a refusal, means the store answers
          if (e instanceof AwsServiceException s) {
            throw new ObjectStorageException(what + " failed: " + describe(s), e);
          }
          if (e instanceof SdkClientException) {
            throw new ObjectStorageException(what + " at " + endpoint + " failed: " + e, e);
          }
          throw e;
        }
        failedAttempts.incrementAndGet();
        missed(e);
        long jittered = wait / 2 + ThreadLocalRandom.current().nextLong(wait / 2 + 1);
        if (System.nanoTime() + jittered > deadline) {
          throw new ObjectStorageUnavailableException(
              String.format(
                  "%s failed %d times in %d ms at %s (retry window %s), last: %s",
                  what, attempt, (System.nanoTime() - started) / 1_000_000, endpoint, window, e),
              attempt,
              e);
        }
        log.warn(
            "{} failed (try {}), trying again in {} ms: {}",
            what,
            attempt,
            jittered / 1_000_000,
            e.toString());
        sleep(jittered, what);
        wait = Math.min(wait * 2, max.toNanos());
      }
    }
  }

  /**
   * Whether trying again may succeed: no connection or a broken one, a timeout, a 5xx reply,
   * throttling (429, 503 SlowDown), a conditional write that met another in flight (409), an upload
   * S3 timed out (400 RequestTimeout). A client error without an I/O cause (such as no credentials
   * found) is not.
   */
  static boolean isTransient(Throwable e) {
    if (e instanceof AwsServiceException s) {
      int status = s.statusCode();
      String code = s.awsErrorDetails() == null ? null : s.awsErrorDetails().errorCode();
      return status >= 500 || status == 429 || status == 409 || "RequestTimeout".equals(code);
    }
    if (e instanceof ApiCallAttemptTimeoutException || e instanceof TransferException) {
      return true;
    }
    if (e instanceof SdkClientException) {
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
        if (c instanceof IOException) {
          return true;
        }
      }
    }
    return false;
  }

  /** A reply's status, error code and message. */
  static String describe(AwsServiceException s) {
    String code = s.awsErrorDetails() == null ? "?" : s.awsErrorDetails().errorCode();
    return s.statusCode() + " " + code + ": " + s.getMessage();
  }

  private static void sleep(long nanos, String what) throws InterruptedIOException {
    try {
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      InterruptedIOException stop =
          new InterruptedIOException(what + " interrupted while waiting to try again");
      stop.initCause(e);
      throw stop;
    }
  }

  /** A transfer broke off in the middle of a body: worth another try. */
  static final class TransferException extends IOException {
    private static final long serialVersionUID = 1L;

    TransferException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
