package org.tensorcache.actors.session;

import com.typesafe.config.Config;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Settings of the trainer sessions, read once from {@code tensorcache.trainer-session}.
 *
 * @param snapshotEvery a snapshot is taken every this many events
 * @param keepSnapshots snapshots kept per session, the newest ones
 * @param role the cluster role of the nodes that host sessions; empty for every node
 */
public record TrainerSessionSettings(int snapshotEvery, int keepSnapshots, Optional<String> role) {

  /** Config path of these settings. */
  public static final String PATH = "tensorcache.trainer-session";

  /** Config path of the dispatcher that computes the epoch permutations the sessions need. */
  public static final String PERMUTATION_DISPATCHER = PATH + ".permutation-dispatcher";

  /** Checks the values. */
  public TrainerSessionSettings {
    if (snapshotEvery < 1) {
      throw new IllegalArgumentException(
          PATH + ".snapshot-every = " + snapshotEvery + " must be at least 1");
    }
    if (keepSnapshots < 1) {
      throw new IllegalArgumentException(
          PATH + ".keep-snapshots = " + keepSnapshots + " must be at least 1");
    }
  }

  /** Reads the settings from the configuration of {@code system}. */
  public static TrainerSessionSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  /** Reads the settings from {@code config}, which must contain {@value #PATH}. */
  public static TrainerSessionSettings fromConfig(Config config) {
    Config session = config.getConfig(PATH);
    String role = session.getString("role").trim();
    return new TrainerSessionSettings(
        session.getInt("snapshot-every"),
        session.getInt("keep-snapshots"),
        role.isEmpty() ? Optional.empty() : Optional.of(role));
  }
}
