const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A UUID in its text form (memory, directive and operation ids). Those ids are `uuid` columns,
 * which refuse any other text with an error, so callers check before they ask the store.
 */
export const isUuid = (id: string) => UUID.test(id);
