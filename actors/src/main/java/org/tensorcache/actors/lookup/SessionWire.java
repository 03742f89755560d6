package org.tensorcache.actors.lookup;

import java.net.ProtocolException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import org.tensorcache.actors.session.SessionStep;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The trainer-session ops of the lookup port (protocol version 2), both directions: a process that
 * is no member opens its rank's session, resumes it at a step and takes its steps with their
 * values, served by the same sharded trainer sessions as members' trainers.
 *
 * <pre>
 * op OPEN   body := run:str rank:i32 worldSize:i32 seed:i64 globalBatch:i32
 * op RESUME body := run:str rank:i32 step:i64
 * op NEXT   body := run:str rank:i32 step:i64          (step: the one the trainer expects)
 * OK to OPEN, RESUME body := nextStep:i64
 * OK to NEXT         body := step:i64 epoch:i64 count:i32 index:i64 * count, then the values as in
 *                            the OK reply to GET of the request's version
 * </pre>
 *
 * The client's side reads the replies' bodies after {@link LookupReplies#decodeStatus}: {@link
 * #decodeNextStep} and, in version 3, {@link #decodeStep}.
 */
public final class SessionWire {
  /** Session ops, from protocol version 2 on. */
  public static final byte OPEN = 3, RESUME = 4, NEXT = 5;

  private SessionWire() {}

  /**
   * A decoded session request; {@code worldSize}, {@code seed}, {@code globalBatch} only OPEN's.
   */
  public record Args(String run, int rank, int worldSize, long seed, int globalBatch, long step) {}

  /**
   * The OK reply to NEXT as a client reads it.
   *
   * @param step the step served, its epoch and its indices
   * @param values per field, the values of the indices in their order ({@link
   *     LookupChecks#newValues})
   */
  public record StepReply(SessionStep step, Object[] values) {}

  /** Whether {@code op} is a session op. */
  static boolean isSessionOp(byte op) {
    return op == OPEN || op == RESUME || op == NEXT;
  }

  /** Reads the body of a session request after its header. */
  static Args decode(byte op, ByteBuffer frame) throws ProtocolException {
    String run = LookupWire.getStr(frame);
    int rank = frame.getInt();
    Args args =
        op == OPEN
            ? new Args(run, rank, frame.getInt(), frame.getLong(), frame.getInt(), -1)
            : new Args(run, rank, 0, 0, 0, frame.getLong());
    if (frame.hasRemaining()) {
      throw new ProtocolException(frame.remaining() + " bytes after the request of op " + op);
    }
    return args;
  }

  /** Builds a session request in {@code version} (2 or 3; the client's side). */
  public static ByteBuffer encode(
      LookupFrames frames, byte version, byte op, byte[] cacheId, Args a) {
    byte[] run = LookupWire.utf8(a.run());
    int body = 2 + 2 + cacheId.length + 2 + run.length + 4 + (op == OPEN ? 4 + 8 + 4 : 8);
    ByteBuffer b = frames.start(body).put(version).put(op);
    LookupWire.putStr(b, cacheId);
    LookupWire.putStr(b, run);
    b.putInt(a.rank());
    return op == OPEN
        ? b.putInt(a.worldSize()).putLong(a.seed()).putInt(a.globalBatch())
        : b.putLong(a.step());
  }

  /**
   * Reads the body of the OK reply to OPEN or RESUME: the step the next NEXT serves; a malformed
   * body is a {@link ProtocolException}.
   */
  public static long decodeNextStep(ByteBuffer reply) throws ProtocolException {
    if (reply.remaining() != Long.BYTES) {
      throw new ProtocolException(
          "reply to OPEN or RESUME of " + reply.remaining() + " bytes, expected 8");
    }
    return reply.getLong();
  }

  /**
   * Reads the body of the version-3 OK reply to NEXT of a cache of {@code spec}; a malformed body,
   * or one that is not exactly the step's indices and their values, is a {@link ProtocolException}.
   * Nothing is allocated before the bytes to fill it are known to be there.
   */
  public static StepReply decodeStep(ByteBuffer reply, CacheSpec spec) throws ProtocolException {
    try {
      long step = reply.getLong();
      long epoch = reply.getLong();
      int count = reply.getInt();
      long rowBytes = Long.BYTES;
      for (FieldSpec f : spec.fields()) {
        rowBytes += (long) f.width() * f.dtype().bytes();
      }
      if (count < 0 || count > reply.remaining() / rowBytes) {
        throw new ProtocolException(
            String.format(
                "%d indices announced, %d bytes left for them and their values (%d bytes an index)",
                count, reply.remaining(), rowBytes));
      }
      long[] indices = new long[count];
      reply.asLongBuffer().get(indices);
      reply.position(reply.position() + count * Long.BYTES);
      Object[] values = LookupChecks.newValues(spec, count);
      LookupReplies.decodeValues(reply, spec, count, values);
      if (reply.hasRemaining()) {
        throw new ProtocolException(reply.remaining() + " bytes after the values of the step");
      }
      return new StepReply(new SessionStep(step, epoch, indices), values);
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated reply to NEXT");
    }
  }

  /** Builds the OK reply to OPEN or RESUME. */
  static ByteBuffer encodeNextStep(LookupFrames frames, long nextStep) {
    return frames.start(1 + 8).put(LookupWire.OK).putLong(nextStep);
  }

  /** Builds the OK reply to NEXT in {@code version}: the step, its indices and their values. */
  static ByteBuffer encodeStep(
      LookupFrames frames, byte version, CacheSpec spec, SessionStep step, Object[] values) {
    int body = 1 + 8 + 8 + 4 + step.indices().length * Long.BYTES;
    body += LookupReplies.valuesBytes(version, spec, values);
    ByteBuffer b = frames.start(body).put(LookupWire.OK);
    b.putLong(step.step()).putLong(step.epoch()).putInt(step.indices().length);
    b.asLongBuffer().put(step.indices());
    b.position(b.position() + step.indices().length * Long.BYTES);
    return LookupReplies.putValues(b, version, spec, values);
  }
}
