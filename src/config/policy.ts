// Access, policy and rate-limit settings (issue: operating it in public). Owned by src/relay/policy.
import { z } from 'zod';
import { strList } from './fields.js';

export const policySchemaShape = {
  adminPubkeys: strList([], 'admin pubkeys (NIP-86 management), hex or npub'),
};
