/** The ETag response header: the resource's etag, quoted (RFC 9110 §8.8.3). */
export const quoteEtag = (etag: string) => `"${etag}"`;
