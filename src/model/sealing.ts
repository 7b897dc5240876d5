/**
 * What the store needs of the keyring that seals channel secrets at rest (src/secrets/keyring.ts):
 * seal a value for a context, open it again, and know which key seals now.
 */

/** A sealed value as stored: the key id apart (its own column), the rest one byte string. */
export interface Sealed {
  keyId: string;
  /** version (1 byte) | IV (12) | GCM tag (16) | ciphertext. */
  data: Buffer;
}

export interface Sealer {
  /** The key that seals (its id is stored beside each value). */
  readonly current: { readonly id: string };
  /** Whether the sealer holds the key `id`. */
  has(id: string): boolean;
  /** Seals a JSON value; `context` (e.g. the workspace) must be given again to open it. */
  seal(value: unknown, context: string): Sealed;
  /** Opens a sealed value; throws when its key is unknown or it was altered. */
  open(sealed: Sealed, context: string): unknown;
}
