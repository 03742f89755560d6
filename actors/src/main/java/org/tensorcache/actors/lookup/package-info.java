/** Serving batches of indices: from the local replica, computing missing ones on demand. */
package org.tensorcache.actors.lookup;
