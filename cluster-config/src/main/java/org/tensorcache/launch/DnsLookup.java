package org.tensorcache.launch;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.Security;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Hashtable;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import javax.naming.Context;
import javax.naming.NameNotFoundException;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.directory.Attribute;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;

/**
 * Resolves a DNS name to the addresses of its A and AAAA records, through the system's resolver or
 * by asking one DNS server directly (the JDK's own JNDI DNS provider, no library).
 */
public final class DnsLookup {
  /**
   * The order of "lowest address": numeric, byte by byte, IPv4 before IPv6 (the text would put
   * 10.0.0.10 before 10.0.0.9).
   */
  public static final Comparator<InetAddress> ORDER =
      Comparator.<InetAddress>comparingInt(a -> a.getAddress().length)
          .thenComparing(InetAddress::getAddress, Arrays::compareUnsigned);

  private final Optional<HostPort> server;

  private DnsLookup(Optional<HostPort> server) {
    this.server = server;
  }

  /** Asks {@code server}; empty: the system's resolver. */
  public static DnsLookup of(Optional<HostPort> server) {
    return new DnsLookup(server);
  }

  /**
   * The distinct addresses of {@code name} in {@link #ORDER}; empty when the name or its records do
   * not exist (yet). Throws when the DNS server cannot be asked or fails to answer.
   */
  public List<InetAddress> resolve(String name) throws IOException {
    List<InetAddress> found = server.isPresent() ? ask(server.get(), name) : system(name);
    TreeSet<InetAddress> sorted = new TreeSet<>(ORDER);
    sorted.addAll(found);
    return List.copyOf(sorted);
  }

  private static List<InetAddress> system(String name) {
    try {
      return Arrays.asList(InetAddress.getAllByName(name));
    } catch (UnknownHostException e) {
      return List.of(); // the system's resolver does not tell "no such name" from a failure
    }
  }

  private static List<InetAddress> ask(HostPort server, String name) throws IOException {
    Hashtable<String, String> env = new Hashtable<>();
    env.put(Context.INITIAL_CONTEXT_FACTORY, "com.sun.jndi.dns.DnsContextFactory");
    env.put(Context.PROVIDER_URL, "dns://" + server + "/");
    // a lost UDP answer is asked again soon: a join attempt should not wait the default 15 s
    env.put("com.sun.jndi.dns.timeout.initial", "500");
    env.put("com.sun.jndi.dns.timeout.retries", "3");
    List<InetAddress> out = new ArrayList<>();
    try {
      DirContext dns = new InitialDirContext(env);
      try {
        // one type per query: asked for both at once the provider sends ANY, which servers
        // answer in their own ways
        for (String type : List.of("A", "AAAA")) {
          Attribute records = dns.getAttributes(name, new String[] {type}).get(type);
          if (records == null) {
            continue; // no records of this type
          }
          NamingEnumeration<?> values = records.getAll();
          while (values.hasMore()) {
            // a literal, never looked up
            out.add(InetAddress.getByName(values.next().toString()));
          }
        }
      } finally {
        dns.close();
      }
    } catch (NameNotFoundException e) {
      return List.of();
    } catch (NamingException e) {
      throw new IOException(
          "DNS server " + server + " did not resolve " + name + ": " + e.getMessage(), e);
    }
    return out;
  }

  /**
   * Makes the JVM keep what the system's resolver answers for 5 s (names not found 1 s) unless
   * {@code networkaddress.cache.ttl} or {@code -Dsun.net.inetaddr.ttl} say otherwise: by default it
   * keeps answers 30 s, so a node re-resolving its seeds' name would not see new records for that
   * long. Takes effect only before the process's first lookup.
   */
  public static void shortenJvmCache() {
    if (Security.getProperty("networkaddress.cache.ttl") == null
        && System.getProperty("sun.net.inetaddr.ttl") == null) {
      Security.setProperty("networkaddress.cache.ttl", "5");
    }
    if (System.getProperty("sun.net.inetaddr.negative.ttl") == null) {
      Security.setProperty("networkaddress.cache.negative.ttl", "1");
    }
  }
}
