/**
 * What a cache is: its {@link org.tensorcache.store.spec.CacheSpec} (examples, fields, ranges) and
 * the {@link org.tensorcache.store.spec.Fingerprint} of everything that determines its values.
 */
package org.tensorcache.store.spec;
