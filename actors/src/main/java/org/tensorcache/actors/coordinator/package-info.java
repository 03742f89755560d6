/**
 * The cluster singleton that keeps the manifest of persisted ranges (event-sourced), its child that
 * drives fills, persists complete ranges and restores them at start (on the I/O dispatcher), and
 * the adapter through which shards report the segments they wrote.
 */
package org.tensorcache.actors.coordinator;
