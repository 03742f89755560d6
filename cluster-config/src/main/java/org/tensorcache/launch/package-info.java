/**
 * Starting and driving TensorCache from a program: configuration profiles, embedded and cluster
 * nodes, short-lived client members, the cache that a job's options decide, and a fill followed
 * through the coordinator. The command line, the benchmarks and the chaos tests all build on it; it
 * never depends on the command line.
 */
package org.tensorcache.launch;
