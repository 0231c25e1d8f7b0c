/**
 * Feide's affiliations are not VOOT roles: a requirement that names one (`'employee'`) is
 * refused, and the error says which role the group service sends for it instead, since an
 * employee on an `fc:org` group is `admin` (not an administrator), which nobody guesses.
 *
 * @module
 */

const HINTS: Readonly<Record<string, string>> = {
  employee: "a Feide employee is 'admin' on fc:org and fc:orgunit groups (such as requireGroup('fc:org:example.org', 'admin'))",
  faculty: "Feide faculty are employees, 'admin' on fc:org and fc:orgunit groups (such as requireGroup('fc:org:example.org', 'admin'))",
  staff: "Feide staff are employees, 'admin' on fc:org and fc:orgunit groups (such as requireGroup('fc:org:example.org', 'admin'))",
  student: "a Feide student is 'member' on fc:org groups (such as requireGroup('fc:org:example.org', 'member'))",
  teacher: "a Feide teacher is 'admin' on school groups (fc:gogroup, fc:grep)",
}

/**
 * The sentence to append to an unknown-role error when `role` is a Feide affiliation
 * (with a leading `'; '`), or `''`.
 *
 * @example
 * ```ts
 * throw new InvalidArgumentError(`Unknown role "employee"${affiliationHint('employee')}`)
 * ```
 */
export function affiliationHint(role: string): string {
  const hint = Object.hasOwn(HINTS, role.toLowerCase()) ? HINTS[role.toLowerCase()] : undefined
  return hint === undefined ? '' : `; ${hint}`
}
