package org.tensorcache.launch.tls;

import com.typesafe.config.Config;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.remote.artery.tcp.SSLEngineProvider;
import org.apache.pekko.remote.artery.tcp.ssl.RotatingKeysSSLEngineProvider;
import scala.Option;

/**
 * Artery's TLS engines of the {@code tls} profile: Pekko's {@code RotatingKeysSSLEngineProvider}
 * (PEM files read again every {@code ssl-context-cache-ttl}, mutual authentication, peers that
 * share a subject name with this node's certificate), plus what it leaves out: on a connection this
 * node opens, the peer's certificate must name the host it dialled (as an HTTPS client checks a
 * server), unless {@code tensorcache.security.tls.hostname-verification} is off.
 */
public final class ClusterTlsEngineProvider implements SSLEngineProvider {
  private final RotatingKeysSSLEngineProvider keys;
  private final boolean verifyHostnames;

  /** The provider of {@code system}, as Artery creates it from {@code ssl-engine-provider}. */
  public ClusterTlsEngineProvider(ActorSystem system) {
    this.keys = new RotatingKeysSSLEngineProvider(system);
    this.verifyHostnames = verifiesHostnames(system.settings().config());
  }

  /** Whether {@code config} has peers' hostnames verified (the default). */
  static boolean verifiesHostnames(Config config) {
    String key = TransportSecurity.HOSTNAME_VERIFICATION;
    return !config.hasPath(key) || config.getBoolean(key);
  }

  @Override
  public SSLEngine createServerSSLEngine(String hostname, int port) {
    return keys.createServerSSLEngine(hostname, port);
  }

  @Override
  public SSLEngine createClientSSLEngine(String hostname, int port) {
    SSLEngine engine = keys.createClientSSLEngine(hostname, port);
    if (verifyHostnames) {
      // the JDK's trust manager then checks the peer's names against the host (IP or DNS)
      SSLParameters parameters = engine.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS");
      engine.setSSLParameters(parameters);
    }
    return engine;
  }

  @Override
  public Option<Throwable> verifyClientSession(String hostname, SSLSession session) {
    return keys.verifyClientSession(hostname, session);
  }

  @Override
  public Option<Throwable> verifyServerSession(String hostname, SSLSession session) {
    return keys.verifyServerSession(hostname, session);
  }
}
