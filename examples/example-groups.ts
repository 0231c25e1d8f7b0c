/**
 * The groups the example apps' routes ask for. By default Feide's, as the real service and
 * the emulator's built-in data have them; the demo's `npm start -- --dialect openconext`
 * passes SURFconext's URN groups instead (demo/dialects.ts).
 */
export interface ExampleGroups {
  /** `GET /api/staff` needs this group, with at least {@link ExampleGroups.staffRole}. */
  readonly staff: string
  /** The role `GET /api/staff` needs in {@link ExampleGroups.staff}. */
  readonly staffRole: string
  /** `GET /api/inf1000` needs this group, in any role. */
  readonly course: string
}

/**
 * Feide: `/api/staff` for employees of example.org (NB: on `fc:org` groups `admin` means
 * *employee*, not administrator), `/api/inf1000` for anyone enrolled in the INF1000 course.
 */
export const FEIDE_GROUPS: ExampleGroups = {
  staff: 'fc:org:example.org',
  staffRole: 'admin',
  course: 'fc:fs:fs:emne:example.org:INF1000:1',
}
