package org.tensorcache.actors.lookup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.cache.NodeMetrics.FailureReason;

/** A failed lookup is counted under the reason that made it fail, however it was wrapped. */
class LookupFailureReasonTest {
  @Test
  void badInputIsABadRequest() {
    assertEquals(
        FailureReason.BAD_REQUEST,
        FailureReason.of(new IllegalArgumentException("index 12 out of range [0, 10)")));
  }

  @Test
  void theLookupTimeoutIsATimeoutWhereverItComesFrom() {
    assertEquals(
        FailureReason.TIMEOUT,
        FailureReason.of(
            new LookupFailedException("not answered within 31000 ms", new TimeoutException())));
    // the lookup actor's reply to a lookup that ran past the timeout, through an ask
    String reply = "lookup of 3 indices of cache 'c' failed: not computed within 30000 ms";
    assertEquals(
        FailureReason.TIMEOUT,
        FailureReason.of(
            new LookupFailedException(
                reply, new CompletionException(new LookupTimeoutException(reply)))));
  }

  @Test
  void aReasonIsToldByTypeNotByItsWords() {
    String reply = "lookup of 3 indices of cache 'c' failed: not computed within 30000 ms";
    assertEquals(
        FailureReason.FAILED,
        FailureReason.of(
            new LookupFailedException(
                reply, new CompletionException(new StatusReply.ErrorMessage(reply)))));
  }

  @Test
  void anythingElseFailed() {
    assertEquals(
        FailureReason.FAILED,
        FailureReason.of(
            new LookupFailedException(
                "lookup failed: runner output has NaN", new IllegalStateException("NaN"))));
  }
}
