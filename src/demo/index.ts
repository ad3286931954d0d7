export { FIXTURE_NAMES, fixturePayload, loadFixtureCatalog, type FixtureName } from './catalogs.js';
export {
  FIXTURE_DATA_OPTIONS, fixtureData, generateRows, generateRowsIter, recordId, tenantShares, zoneOffset,
  type GenerateOptions, type Row, type RowBatch,
} from './generate.js';
export { insertRows, loadIntoDatabase, type LoadOptions, type Queryable } from './load.js';
export { demoData, DEMO_ORGANIZATIONS, type DemoOptions, type DemoObject } from './demo.js';
