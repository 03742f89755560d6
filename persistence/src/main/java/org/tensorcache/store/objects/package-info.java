/**
 * Segments in S3-compatible object storage: the durable place on clouds, where a preempted node's
 * disk vanishes. Objects are created once, checked like segment files on every read, and copied to
 * a verified local cache for readers that map them.
 */
package org.tensorcache.store.objects;
