# Script mode (cmake -P), run by db/CMakeLists.txt: writes OUTPUT, a C++ file holding SCHEMA and
# every MIGRATIONS_DIR/NNN_name.sql as raw string literals. Fails the build when migrations are
# not numbered 1..N without gaps or when schema.sql does not say it is version N, so the two
# ways of building a database cannot drift apart silently.

set(delim "tiletune_sql")

function(tiletune_literal path out_var)
  file(READ ${path} text)
  string(FIND "${text}" ")${delim}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw-string delimiter )${delim}\"")
  endif()
  set(${out_var} "R\"${delim}(${text})${delim}\"" PARENT_SCOPE)
endfunction()

file(GLOB files ${MIGRATIONS_DIR}/*.sql)
list(SORT files)
set(entries "")
set(expected 1)
foreach(f IN LISTS files)
  get_filename_component(name ${f} NAME)
  if(NOT name MATCHES "^([0-9]+)_[A-Za-z0-9_]+\\.sql$")
    message(FATAL_ERROR "${f}: a migration is named NNN_what.sql")
  endif()
  math(EXPR version "${CMAKE_MATCH_1}")
  if(NOT version EQUAL expected)
    message(FATAL_ERROR "${f}: expected migration number ${expected}, found ${version}")
  endif()
  tiletune_literal(${f} literal)
  string(APPEND entries "    {${version}, \"${name}\",\n${literal}},\n")
  math(EXPR expected "${expected} + 1")
endforeach()
math(EXPR latest "${expected} - 1")
if(latest LESS 1)
  message(FATAL_ERROR "no migrations in ${MIGRATIONS_DIR}")
endif()

file(READ ${SCHEMA} schema_text)
if(NOT schema_text MATCHES "schema-version: ([0-9]+)")
  message(FATAL_ERROR "${SCHEMA}: missing the '-- schema-version: N' line")
endif()
if(NOT CMAKE_MATCH_1 EQUAL latest)
  message(FATAL_ERROR "${SCHEMA} says schema-version ${CMAKE_MATCH_1}, the migrations end at ${latest}")
endif()
tiletune_literal(${SCHEMA} schema_literal)

set(code "// Generated from db/schema.sql and db/migrations/*.sql by tuner/src/db/embed_sql.cmake.
// Do not edit: edit the .sql files, the build regenerates this.
#include \"db/embedded_sql.hpp\"
#include \"tiletune/trial_record.hpp\"

namespace tiletune::db_detail {

// The readers (the engine's and the query library's) know the versions up to
// cache_newest_schema: a migration without raising it, or the other way round, does not build.
static_assert(${latest} == cache_newest_schema,
              \"db/migrations/ ends at ${latest} but cache_newest_schema in tiletune/trial_record.hpp differs\");

namespace {

constexpr std::string_view schema_text =
${schema_literal};

constexpr EmbeddedMigration migration_list[] = {
${entries}};

}  // namespace

std::string_view schema_sql() noexcept { return schema_text; }
int latest_schema_version() noexcept { return ${latest}; }
std::span<const EmbeddedMigration> migrations() noexcept { return migration_list; }

}  // namespace tiletune::db_detail
")

# Write only on change, so that touching a .sql file without editing it recompiles nothing.
file(WRITE ${OUTPUT}.tmp "${code}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
