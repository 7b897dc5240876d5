-- Channel secrets sealed at rest (AES-256-GCM, src/store/secrets.ts): the sealed bytes and the
-- id of the key that sealed them. A sealed row keeps '{}' in `secrets`. Rows written before
-- this migration (plaintext `secrets`, no key id) are sealed by `rotscope serve` when it
-- starts, or by `rotscope secrets seal`; `rotscope secrets rotate` re-seals with a new key.
ALTER TABLE channels ADD COLUMN secrets_sealed bytea;
ALTER TABLE channels ADD COLUMN secrets_key_id text;
ALTER TABLE channels ADD CONSTRAINT channels_sealed_with_key
  CHECK ((secrets_sealed IS NULL) = (secrets_key_id IS NULL));
