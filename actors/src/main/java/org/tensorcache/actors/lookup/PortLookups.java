package org.tensorcache.actors.lookup;

import java.nio.ByteBuffer;
import org.tensorcache.actors.cache.NodeMetrics;

/**
 * Counts the lookup port's lookups in the node's metrics: a GET, and a session's NEXT (its step's
 * values), timed from the decoded request to the encoded reply. Other requests (DESCRIBE, a
 * session's OPEN and RESUME) are no lookups.
 */
final class PortLookups {
  private PortLookups() {}

  private static boolean isLookup(LookupWire.Request request) {
    return request.session() == null
        ? request.op() == LookupWire.GET
        : request.op() == SessionWire.NEXT;
  }

  /** Counts {@code request} as served, if it is a lookup, and returns its {@code reply}. */
  static ByteBuffer served(
      LocalLookup lookup, LookupWire.Request request, long startedNanos, ByteBuffer reply) {
    if (isLookup(request)) {
      lookup.metrics().lookupServed(NodeMetrics.LookupPath.PORT, startedNanos);
    }
    return reply;
  }

  /** Counts {@code request} as failed with {@code failure}, if it is a lookup. */
  static void failed(LocalLookup lookup, LookupWire.Request request, RuntimeException failure) {
    if (isLookup(request)) {
      lookup.metrics().lookupFailed(NodeMetrics.LookupPath.PORT, LocalLookup.reasonOf(failure));
    }
  }
}
