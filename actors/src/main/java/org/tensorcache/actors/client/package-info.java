/**
 * The Java API for trainers: lookups and sessions on a member, a DJL data set adapter, and lookups
 * through the lookup port for processes that are no members.
 */
package org.tensorcache.actors.client;
