/** Renders started by install creation, PATCH or an automatic update: render, then commit. */
export const RENDER_RUN = 'render.run';
/**
 * A restore's commit is made and recorded in the request; this job moves `main` to it if the
 * request could not (src/installs/renders/landing.ts), verifies it and completes the render.
 */
export const RENDER_RESTORE = 'render.restore';

/** Operation kinds a client sees on GET /v1/operations/{id}. */
export const OP_INSTALL_RENDER = 'install.render';
export const OP_INSTALL_RESTORE = 'install.restore';

export interface RenderJob {
  render_id: string;
}
