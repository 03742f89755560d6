/** Field specifications shared by runners and storage: names, dtypes and per-example shapes. */
package org.tensorcache.fields;
