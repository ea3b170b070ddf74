// The one config schema: defaults, validation and documentation all come from here.
import { z } from 'zod';
import { relaySchemaShape } from './relay.js';
import { spiderSchema } from './spider.js';
import { policySchemaShape } from './policy.js';
import { negentropySchema } from './negentropy.js';
import { searchSchema } from './search.js';
import { trustSchema } from './trust.js';

export const configSchema = z
  .object({
    ...relaySchemaShape,
    ...policySchemaShape,
    spider: spiderSchema,
    negentropy: negentropySchema,
    search: searchSchema,
    trust: trustSchema,
  })
  .strict();

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
