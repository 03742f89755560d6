/** The Java API for trainers: lookups, sessions and a DJL data set adapter. */
package org.tensorcache.actors.client;
