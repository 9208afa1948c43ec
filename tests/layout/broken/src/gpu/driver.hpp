// A private header of the gpu stage.
#pragma once
