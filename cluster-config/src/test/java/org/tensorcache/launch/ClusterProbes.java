package org.tensorcache.launch;

import java.time.Duration;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.lookup.LookupActor;

/** What the cluster tests of this package ask of a node, and the reference values they expect. */
final class ClusterProbes {
  private ClusterProbes() {}

  /** The lookup actor of {@code node}, as the receptionist of the kit's node lists it. */
  static ActorRef<LookupActor.Command> lookupActorOf(ActorTestKit kit, ActorSystem<?> node) {
    TestProbe<Receptionist.Listing> listings = kit.createTestProbe();
    return listings.awaitAssert(
        Duration.ofSeconds(20),
        Duration.ofMillis(200),
        () -> {
          kit.system()
              .receptionist()
              .tell(Receptionist.find(LookupActor.SERVICE_KEY, listings.ref()));
          Set<ActorRef<LookupActor.Command>> refs =
              listings.receiveMessage().getServiceInstances(LookupActor.SERVICE_KEY);
          return refs.stream()
              .filter(ref -> ref.path().address().equals(address(node)))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no lookup actor of " + address(node) + refs));
        });
  }

  /** The cluster address of {@code system}. */
  static Address address(ActorSystem<?> system) {
    return Cluster.get(system).selfMember().address();
  }

  /** {@code values} at {@code indices}. */
  static float[] pick(float[] values, long[] indices) {
    float[] out = new float[indices.length];
    for (int i = 0; i < indices.length; i++) {
      out[i] = values[(int) indices[i]];
    }
    return out;
  }
}
