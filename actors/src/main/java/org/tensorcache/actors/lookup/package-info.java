/**
 * Serving values of batches of indices: the one local lookup path (check, gather from the replica,
 * ask for what is missing, scatter), the lookup actor that has missing ones computed, and the
 * binary lookup port with its wire codec.
 */
package org.tensorcache.actors.lookup;
