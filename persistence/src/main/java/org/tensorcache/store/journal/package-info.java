/**
 * Pekko Persistence on JDBC: the settings of the journal database (embedded H2 by default,
 * PostgreSQL for clusters), {@link org.tensorcache.store.journal.JournalSchema}, which creates its
 * tables on first start, and {@link org.tensorcache.store.journal.LeaseTable}, the leases that a
 * cluster's nodes take in that database.
 */
package org.tensorcache.store.journal;
