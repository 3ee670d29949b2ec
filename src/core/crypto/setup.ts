import type { BankKeyStore } from '../../store/store.js';
import type { Keyring } from './keyring.js';

/**
 * Start-up check: when encrypted banks exist, the master key must be set and must open every
 * one of their data keys (each is unwrapped). Throws an Error saying what is wrong, so a
 * missing or wrong key stops the server instead of producing garbage.
 */
export async function verifyMasterKey(store: BankKeyStore, keyring: Keyring | null): Promise<void> {
  const keys = await store.listBankKeys();
  const unkeyed = await store.countUnkeyedEncryptedBanks();
  if (!keyring) {
    if (keys.length + unkeyed > 0) {
      throw new Error(
        `${keys.length + unkeyed} bank(s) use managed encryption but MNEMO_MASTER_KEY is not set; ` +
          'start with the master key their data keys were wrapped by',
      );
    }
    return;
  }
  const refused = keys.filter((k) => !keyring.opens(k.project_id, k.bank_id, k.wrapped));
  if (refused.length) {
    const by = [...new Set(refused.map((k) => k.fingerprint))].join(', ');
    throw new Error(
      `MNEMO_MASTER_KEY (fingerprint ${keyring.fingerprint}) does not open the data keys of ${refused.length} of ` +
        `${keys.length} encrypted bank(s), wrapped by master key ${by}: use that key, or re-wrap the data keys ` +
        'with `mnemo keys rotate-master --old <that key> --new <this key>`',
    );
  }
}
