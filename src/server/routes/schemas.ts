/** JSON schemas shared by the routes: the one source for validation and for /openapi.json. */

export const SLUG_PARAM = {
  type: 'object',
  required: ['slug'],
  properties: { slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the object slug' } },
} as const;

export const RECORD_PARAMS = {
  type: 'object',
  required: ['slug', 'id'],
  properties: {
    slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the object slug' },
    id: { type: 'string', minLength: 1, maxLength: 200, description: 'the record id' },
  },
} as const;

/** The error envelope (section 7), for the documentation. */
export const ERROR_RESPONSE = {
  type: 'object',
  description: 'error envelope',
  properties: {
    success: { type: 'boolean', const: false },
    data: {
      type: 'object',
      properties: {
        message: { type: 'string' },
        status_code: { type: 'integer' },
        error_code: { type: 'string' },
        validation_errors: { type: ['array', 'null'], items: { type: 'object', additionalProperties: true } },
        meta_data: { type: ['string', 'null'] },
      },
      additionalProperties: true,
    },
  },
} as const;
