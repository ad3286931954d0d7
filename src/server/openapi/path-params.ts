/** JSON schemas shared by the routes: the one source for validation and for /openapi.json. */

export const SLUG_PARAM = {
  type: 'object',
  required: ['slug'],
  properties: { slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the object slug', examples: ['contact'] } },
} as const;

export const RECORD_PARAMS = {
  type: 'object',
  required: ['slug', 'id'],
  properties: {
    slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the object slug', examples: ['contact'] },
    id: { type: 'string', minLength: 1, maxLength: 200, description: 'the record id', examples: ['org_acme_contact_10'] },
  },
} as const;
