/** The cluster singleton that drives fills, persists complete ranges and restores them. */
package org.tensorcache.actors.coordinator;
