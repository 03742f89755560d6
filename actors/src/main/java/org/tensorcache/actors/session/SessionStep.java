package org.tensorcache.actors.session;

import java.util.Arrays;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * Tells a trainer rank what to train on at one global step: the reply of its session to {@link
 * TrainerSession.Next}. Equal when step, epoch and indices are.
 *
 * @param step the global step
 * @param epoch the epoch of the step
 * @param indices the example indices of this rank, in the order of the epoch's permutation
 */
public record SessionStep(long step, long epoch, long[] indices) implements KryoSerializable {
  @Override
  public boolean equals(Object other) {
    return other instanceof SessionStep that
        && step == that.step
        && epoch == that.epoch
        && Arrays.equals(indices, that.indices);
  }

  @Override
  public int hashCode() {
    return 31 * Long.hashCode(step) + Arrays.hashCode(indices);
  }

  @Override
  public String toString() {
    return "SessionStep[step=%d, epoch=%d, indices=%s]"
        .formatted(step, epoch, Arrays.toString(indices));
  }
}
