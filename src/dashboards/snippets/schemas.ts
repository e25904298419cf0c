import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, UnixSeconds } from '../../http/schemas.js';
import { NullableStringEnum, StringEnum } from '../schemas/common.js';
import { DISPLAY_TYPES } from '../schemas/widgets.js';

export const SNIPPET_STATES = ['active', 'archived'] as const;

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Source = Type.String({ minLength: 1, maxLength: 65536, description: 'The query the snippet runs; 1-65536 characters' });
const DisplayType = NullableStringEnum(DISPLAY_TYPES, { description: "How the snippet's result is rendered by default" });

export const Snippet = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    name: Name,
    source: Source,
    display_type: DisplayType,
    state: StringEnum(SNIPPET_STATES, { description: 'archived: kept, and shown as drift by the revisions that use it' }),
    etag: Type.String({ description: 'Changes with every change, state included; widgets pin it as `snippet_etag`' }),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'Snippet', additionalProperties: false },
);
export type Snippet = Static<typeof Snippet>;

export const SnippetList = ListEnvelope(Snippet, 'Newest first, active and archived');

export const CreateSnippetBody = Type.Object({ name: Name, source: Source, display_type: Type.Optional(DisplayType) }, { title: 'CreateSnippetBody', additionalProperties: false });
export type CreateSnippetBody = Static<typeof CreateSnippetBody>;

export const UpdateSnippetBody = Type.Object(
  { name: Type.Optional(Name), source: Type.Optional(Source), display_type: Type.Optional(DisplayType) },
  { title: 'UpdateSnippetBody', additionalProperties: false, description: 'The fields given replace the current ones; a change gives a new etag' },
);
export type UpdateSnippetBody = Static<typeof UpdateSnippetBody>;

export const SnippetParams = Type.Object({ id: PathId(54, 'Snippet id, `snp_<id>` or bare; length 1-54') });

export const ListSnippetsQuery = PageQuery(100, 20);
