/** The sharded compute entity that owns one range of one cache. */
package org.tensorcache.actors.shard;
