/**
 * The migration list (one file each under src/store/migrations): versions strictly increasing,
 * names unique, applied SQL never edited. How a database is checked against it (a database
 * migrated by a newer mnemo refused, `migrationStatus`) is `schema-version.slow.test.ts`'s: it
 * opens a data directory on disk six times.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/migrations/index.js';

/**
 * SHA-256 of each migration's SQL as released. Databases that applied a migration keep its
 * result, so its text never changes: a schema change is a new migration. A new migration adds
 * its line here (the failure message prints it).
 */
const RELEASED: Record<number, string> = {
  1: 'cefd5814314fea789583266822f2fe0a7de0748dbeec9496b35333a5c06cc332',
  2: '1544e559d667a4a6ee0a1ee2d7ddf2e7c332cdf9638db76a329266567b8e57c2',
  3: '225a5efb28c809d03208b674fc82e1f6b9d1066b915f61443f8e4e4bc3c91971',
  4: 'fade2ac401528d21dd041f2c5052a4511ea2e5614f8a484467f65fd04b6ab47e',
  5: '30915693b392a92be8da7a80d72c1c4f59011b9229f01a74e27f10b95f614000',
  6: 'f9b4654d4b0a87751d5c53f0291b71b7ce106dc25b5ee9f7ab804877fbbbc175',
  7: '4ca9ea44c8b22829ff33512237bf6c38539a6654a2b4a35a2586e9637dfd69f0',
  8: '523e2f272892c2ddf65ab19848d34f775587db4e0a1c36aee9be8fd68470e821',
  9: '2b3e405a588199a24e1c078e74dbf8efb3a0447b116557189ea75db1dc4a1a20',
  10: 'a5b43fc3bc05a8fe744e25abee4d8eaf72c2e54bc981372fd3a7a2ce5d5e0ea8',
  11: 'b92314269d4a22d94016d0aaca65071e50e0b5cde2eabdf8f88149fa2539533b',
  12: '01447df42165b965f5bab657884fe80a1aaf5a399fd8c1bf37fd93ceeef81070',
  13: '98e5fe010707e3d90ae1f7f3482ba24a1caefde0764bd9c35be495aeab0ca11c',
  14: 'f5719651e49fbcf1090533c72624746f3d27e243483e467eb2871afc17588710',
  15: '0484d86cdb8a9105cdbd92ee85cf4615e68364243da7a22db1d43103a913c416',
  16: '88362c57427483c5cbe8e736d4d288638b9c04c2c00412a8302a6c3cb263f97d',
  18: '17254185be3286389d547dc8661eb5d8d7173a363cb689a14389e5185e9fdeb4',
  19: 'abef573859616ac6c5decb31541c9e7806c2f33bff8764c35a7be9bf941ec603',
  20: '8f069ba070a36651988efb4e1c73795b2195c6cafdac8dadc7681f58beebac49',
  22: 'b364d3bc54144178cfa4cf6b706175ad39e0264357fc18b5a7421a369d0affce',
  25: 'a645bf604edd58432027f281fe66d946233e5fc725239474f5c31ee2838edc7e',
  26: '261b8a49c78e33a04340e021e22863eeaa0a44ef832344103c3953d8fde0c598',
  27: '05729705d0190fd2b174fdd527c52b41ac91534324a236b30c80aa2c691b1460',
  28: '7a2a5c796008fa1855700c99a115ff733a9860833e54475a9ea7e5060ae3fa9f',
  29: '1b6c51d6f32e4fca183fef2a291958c7285f18173e4031ae5757f5538d636c49',
  30: '8c88be65adfd7b06f3ed58729864de550a33927656d1e31f2db4c665915a2163',
  32: '02a969067a2ee82cf11e1ac704a184fc1a36fb7b05ab992ac985fda1f6308572',
  33: 'df1c18a59c51c30ca16cc283cfde8c9286bfec30c36c7c2365fb65db9020832c',
  34: '409a501cdd21763df211f02c18a23bfd07a273e53f35251f045f867c986cb272',
  35: '1671446021159c154d3b8638c888e526727c12309faf2dea5f0c1d8f73cec648',
  36: 'eebfe447ef7789f1699d83ea7a951c269c2eb1ec46cdfe27379fd114bd50fbb1',
  37: '1bc12d3f3ab5d8a84257c5735a7152e0f00f19a2674d34ab8435d1f079a6aadd',
  39: '613ac96a139c1c052cc5a6c7ce4c56d3bc7d098853c559dd499d5ea63ac7db39',
  41: 'dde0be35217f6b516a067558fdd5e45815ec245f32468e625fc1d90e652e72bd',
  42: '9d74c74873ae2a5d13196ddf5c021f35a12d01ccea249b178b6ff7b7bf2827b6',
  44: 'd114c1967d715f373798865f51633a8912b1b386184b28d4311ee45531279ef0',
  45: '982372e7bbf5784f5b07d8108dcacb2ca0ba68ae36106f884c344eaaa57f7c9d',
  46: 'dc6730abcb870d2ee95e4877ab1cba682ee2ce88133f969b86d0a15d3d610d69',
  47: '0c7085daccc403739a58d989735fada9262507af8d3a26a62c427d13dbc9ec33',
  48: 'c86920d7c4088af6576270c97009ef408303e2cc455e785849087e51c1217d26',
  52: '70797aab24696a0a2de5df396f7e8b105c6d1481e8e39379603aacac684ca2d7',
  53: 'bee2feef552c9e5b7d2ae987a887ededdce77855e33f3f1037c5a7e2e5f94ebc',
  54: '49ef2d58609e8e850d63a58819f863c74ced7072736ffc81e05e4edcc513d21d',
};

describe('the migration list', () => {
  test('versions strictly increase and names are unique and non-empty', () => {
    for (let i = 1; i < MIGRATIONS.length; i++) {
      assert.ok(
        MIGRATIONS[i]!.version > MIGRATIONS[i - 1]!.version,
        `migration ${MIGRATIONS[i]!.version} comes after ${MIGRATIONS[i - 1]!.version}`,
      );
    }
    const names = MIGRATIONS.map((m) => m.name);
    assert.equal(new Set(names).size, names.length, 'migration names are unique');
    assert.ok(names.every((n) => n.trim().length > 0));
    assert.ok(MIGRATIONS.every((m) => Number.isInteger(m.version) && m.version > 0));
    assert.equal(LATEST_VERSION, MIGRATIONS.at(-1)!.version);
  });

  test('a released migration is never edited (its SQL checksum is pinned)', () => {
    for (const m of MIGRATIONS) {
      const sum = createHash('sha256').update(m.sql).digest('hex');
      assert.equal(
        sum,
        RELEASED[m.version],
        RELEASED[m.version]
          ? `migration ${m.version} (${m.name}) changed: write a new migration instead`
          : `new migration ${m.version}: add  ${m.version}: '${sum}',  to RELEASED`,
      );
    }
  });
});
