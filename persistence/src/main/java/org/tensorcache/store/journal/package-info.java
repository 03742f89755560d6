/**
 * Pekko Persistence on JDBC: the settings of the journal database (embedded H2 by default,
 * PostgreSQL for clusters) and {@link org.tensorcache.store.journal.JournalSchema}, which creates
 * its tables on first start.
 */
package org.tensorcache.store.journal;
