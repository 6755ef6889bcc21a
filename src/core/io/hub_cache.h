// hub_cache.h: the Hugging Face cache, read the way huggingface_hub lays it out. Files
// only: nothing here touches the network, so the commands, the window and the state layer
// can ask "is gpt2 cached, and where" without linking libcurl (that is src/hub/).
//
//   cache folder   $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
//                  else ~/.cache/huggingface/hub
//   a repository   models--ORG--NAME/ (a "/" in the id becomes "--"; "gpt2" is models--gpt2)
//     blobs/<etag>                  the file's bytes (an LFS file's etag is its SHA-256)
//     blobs/<etag>.incomplete       a download in progress or cut off, resumed with Range
//     snapshots/<commit>/<file>     a relative symlink to ../../blobs/<etag>
//     refs/<revision>               the commit hash, exactly 40 hex digits, no newline
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

// The files a GPT-2 model needs; tokenizer.json is fetched too when the repository has one.
const std::vector<std::string>& hub_required_files(); // config.json, model.safetensors, vocab.json, merges.txt

// The cache folder from the environment, as above (not created).
std::string hub_cache_dir();

// True when `id` is a Hub repository id: NAME or ORG/NAME, each part of letters, digits,
// '-', '_', '.', not starting or ending with '-' or '.', no "--" or "..", at most 96
// characters. Otherwise false and one sentence saying why.
bool valid_hub_repo_id(const std::string& id, std::string& error);

// "models--ORG--NAME" for a valid id.
std::string hub_repo_folder(const std::string& id);

// The Hub id of a cache snapshot folder (".../models--ORG--NAME/snapshots/<commit>[/file]"):
// "ORG/NAME", or nullopt for any other path. What the window and the class's pages call a model
// opened from the cache, instead of its commit-named folder.
std::optional<std::string> hub_id_of_snapshot(const std::string& path);

// A revision: a branch or tag name (refs/<revision>) or a 40-hex commit.
bool valid_hub_revision(const std::string& revision, std::string& error);

// The snapshot folder of `id` at `revision` in `cache_dir`, when every required file is there
// (each a file, or a symlink to an existing blob, of non-zero size). Otherwise nullopt, and
// `why` (when given) says what is missing in one clause.
std::optional<std::string> hub_cached_snapshot(const std::string& cache_dir, const std::string& id,
                                               const std::string& revision, std::string* why = nullptr);

// What --model VALUE means, for every command and the window: a path that exists is used as
// it is, and so is one that is plainly a path (starting with '/', '.' or '~', ending in
// .safetensors, .json or .bin, or not a valid id: the loader then names it); otherwise a valid Hub id is looked up in hub_cache_dir() at `revision` ("main" when
// empty) and `path` becomes its snapshot folder and `shown_name` the id. Not a path and not
// cached: false and one sentence naming `attnviz get VALUE` (never a network request).
bool resolve_model_arg(const std::string& value, const std::string& revision, std::string& path,
                       std::string& shown_name, std::string& error);

} // namespace attnviz
