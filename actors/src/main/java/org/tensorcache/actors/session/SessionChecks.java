package org.tensorcache.actors.session;

import java.util.ArrayList;
import java.util.List;
import org.tensorcache.actors.session.TrainerSession.Open;
import org.tensorcache.actors.session.TrainerSessionState.Opened;

/**
 * The checks of a trainer session's commands; each throws an {@link IllegalArgumentException}
 * naming the bad value and what was expected, before anything is persisted.
 */
final class SessionChecks {
  private final String entityId;
  private final int rank;

  /** Creates the checks of the session with id {@code <run id>/<rank>}. */
  SessionChecks(String entityId) {
    this.entityId = entityId;
    this.rank = rankOf(entityId);
  }

  /** Returns the rank in an entity id {@code <run id>/<rank>}, or -1 if it has none. */
  static int rankOf(String entityId) {
    int slash = entityId.lastIndexOf('/');
    if (slash <= 0) {
      return -1;
    }
    try {
      int rank = Integer.parseInt(entityId.substring(slash + 1));
      return rank >= 0 ? rank : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Checks the first {@link Open} of a session. */
  void firstOpen(Open open) {
    checkRun(open);
    RunConfig config = open.config();
    if (config.cacheId() == null || config.cacheId().isBlank()) {
      throw new IllegalArgumentException(
          "cache id '"
              + config.cacheId()
              + "' of trainer session "
              + entityId
              + " is blank; expected the id of the tensor cache the run reads");
    }
    Sampler.checkConfig(config.examples(), config.globalBatch());
    checkWorld(open);
    checkStep(open);
  }

  /** Checks an {@link Open} of a session that is already open. */
  void reopen(Opened state, Open open) {
    checkRun(open);
    List<String> differences = new ArrayList<>();
    RunConfig was = state.config();
    RunConfig now = open.config();
    if (now.examples() != was.examples()) {
      differences.add("examples " + now.examples() + " (recorded " + was.examples() + ")");
    }
    if (now.seed() != was.seed()) {
      differences.add("seed " + now.seed() + " (recorded " + was.seed() + ")");
    }
    if (now.globalBatch() != was.globalBatch()) {
      differences.add(
          "global batch " + now.globalBatch() + " (recorded " + was.globalBatch() + ")");
    }
    if (!was.cacheId().equals(now.cacheId())) {
      differences.add("cache id '" + now.cacheId() + "' (recorded '" + was.cacheId() + "')");
    }
    if (!differences.isEmpty()) {
      throw new IllegalArgumentException(
          "Open of trainer session "
              + entityId
              + " differs from its recorded configuration: "
              + String.join(", ", differences)
              + "; a run keeps its configuration, a new one needs a new run id");
    }
    checkWorld(open);
    checkStep(open);
  }

  /** Checks that the session of {@code state} can serve its next step, before its permutation. */
  void next(Opened state, Sampler sampler) {
    try {
      sampler.checkShare(state.nextStep(), state.rank());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(cannotServe(state.nextStep(), e.getMessage()), e);
    }
  }

  /** Returns why the session cannot serve {@code step}, for {@code reason}. */
  String cannotServe(long step, String reason) {
    return "trainer session " + entityId + " cannot serve step " + step + ": " + reason;
  }

  /** Returns why a session that is not open refuses {@code command}. */
  String notOpen(String command) {
    return "trainer session " + entityId + " is not open; expected Open before " + command;
  }

  /** Checks that {@code step} can be the next step to serve of {@code state}. */
  void resume(Opened state, long step) {
    if (step > state.nextStep()) {
      throw new IllegalArgumentException(
          "cannot resume trainer session "
              + entityId
              + " from step "
              + step
              + ": the last step served is "
              + state.lastServed()
              + "; expected a step <= "
              + state.nextStep());
    }
    long first = state.schedule().firstStep();
    if (step < first) {
      throw new IllegalArgumentException(
          "cannot resume trainer session "
              + entityId
              + " from step "
              + step
              + ": it opened at step "
              + first
              + "; expected a step >= "
              + first);
    }
  }

  private void checkRun(Open open) {
    if (rank < 0) {
      throw new IllegalArgumentException(
          "entity id '" + entityId + "' is not of the form <run id>/<rank>");
    }
    if (open.rank() != rank) {
      throw new IllegalArgumentException(
          "rank "
              + open.rank()
              + " of Open does not match trainer session "
              + entityId
              + " of rank "
              + rank);
    }
    if (open.config() == null) {
      throw new IllegalArgumentException(
          "Open of trainer session " + entityId + " has no run configuration");
    }
  }

  private void checkStep(Open open) {
    if (open.step() < 0) {
      throw new IllegalArgumentException(
          "cannot open trainer session "
              + entityId
              + " at step "
              + open.step()
              + "; expected a step >= 0");
    }
  }

  private void checkWorld(Open open) {
    Sampler.checkWorldSize(open.config().globalBatch(), open.worldSize());
    if (rank >= open.worldSize()) {
      throw new IllegalArgumentException(
          "rank "
              + rank
              + " out of range [0, "
              + open.worldSize()
              + ") of world size "
              + open.worldSize());
    }
  }
}
