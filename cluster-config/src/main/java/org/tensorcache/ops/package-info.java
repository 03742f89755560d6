/**
 * What a node serves to operators: {@code /alive} and {@code /ready} through Pekko Management, and
 * on a port of its own Prometheus metrics, a status page and its JSON. {@link
 * org.tensorcache.launch} starts it with the node; it knows nothing of the launcher.
 */
package org.tensorcache.ops;
